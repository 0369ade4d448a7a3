"""Plain signatures are validated on pydantic-core alone: they must behave exactly as the
pydantic model they replace (same JSON Schema, same accepted values, same errors)."""

from __future__ import annotations

import enum
import inspect
from typing import Annotated, Any, Literal, Optional

import pytest
from codex_mcp.server.errors import SignatureMismatch
from codex_mcp.server.plain_arguments import plain_arguments
from codex_mcp.server.signature import (
    ArgumentModel,
    argument_validator,
    resolved_hints,
)
from pydantic import BaseModel, Field


def _both(fn: Any) -> tuple[Any, ArgumentModel]:
    hints = resolved_hints(fn)
    params = list(inspect.signature(fn).parameters.values())
    plain = plain_arguments(params, hints)
    assert plain is not None, "expected the plain path"
    return plain, ArgumentModel(fn.__name__, params, hints)


def scalars(text: str, count: int = 3, ratio: float = 0.5, loud: bool = False) -> None: ...


def containers(
    tags: list[str],
    weights: dict[str, float],
    anything: Any = None,
    raw_list: list = None,  # type: ignore[assignment]  # noqa: RUF013
    raw_dict: dict[str, Any] | None = None,
) -> None: ...


def optionals_and_literals(
    mode: Literal["fast", "safe"],
    level: Literal[1, 2, 3] = 1,
    only: Literal["x"] = "x",
    note: Optional[str] = None,  # noqa: UP045
    ids: list[int] | None = None,
    snake_case_name: str = "a",
) -> None: ...


def untyped(value, other=5): ...  # type: ignore[no-untyped-def]


def no_parameters() -> None: ...


SIGNATURES = [scalars, containers, optionals_and_literals, untyped, no_parameters]

INPUTS: list[dict[str, Any]] = [
    {},
    {"text": "hi"},
    {"text": "hi", "count": "7", "ratio": 2, "loud": "true"},
    {"text": 5},
    {"text": "hi", "count": 1.5},
    {"tags": ["a", "b"], "weights": {"x": 1}},
    {"tags": "a", "weights": {"x": "heavy"}},
    {"tags": [], "weights": {}, "raw_list": [1, "a"], "raw_dict": None},
    {"mode": "fast"},
    {"mode": "slow", "level": 4},
    {"mode": "safe", "level": 2, "only": "y", "note": None, "ids": ["1", 2]},
    {"mode": "safe", "note": 3, "ids": "nope"},
    {"value": {"nested": [1, 2]}},
    {"value": None, "other": "x", "unknown": 1},
]


def _verdict(validator: Any, arguments: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", validator.validate(arguments)
    except SignatureMismatch as exc:
        return "error", str(exc)


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda fn: fn.__name__)
def test_same_json_schema_as_pydantic(fn: Any) -> None:
    plain, model = _both(fn)
    assert plain.json_schema() == model.json_schema()


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("arguments", INPUTS)
def test_same_verdict_as_pydantic(fn: Any, arguments: dict[str, Any]) -> None:
    plain, model = _both(fn)
    plain_kind, plain_value = _verdict(plain, arguments)
    model_kind, model_value = _verdict(model, arguments)
    assert plain_kind == model_kind
    if plain_kind == "error":
        assert plain_value == model_value
    else:
        # The model fills in defaults; the plain path leaves them to the function's own.
        defaults = {k: v for k, v in model_value.items() if k not in plain_value}
        assert {**plain_value, **defaults} == model_value
        params = inspect.signature(fn).parameters
        assert all(params[k].default == v for k, v in defaults.items())


class Color(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int


def annotated(count: Annotated[int, Field(ge=0, description="how many")]) -> None: ...


def model_arg(point: Point) -> None: ...


def enum_arg(color: Color) -> None: ...


def union_arg(value: int | str) -> None: ...


def list_default(tags: list[str] = ["a"]) -> None: ...  # noqa: B006


@pytest.mark.parametrize(
    "fn", [annotated, model_arg, enum_arg, union_arg, list_default], ids=lambda fn: fn.__name__
)
def test_richer_signatures_fall_back_to_pydantic(fn: Any) -> None:
    hints = resolved_hints(fn)
    params = list(inspect.signature(fn).parameters.values())
    assert plain_arguments(params, hints) is None
    validator = argument_validator(fn, fn.__name__, set())
    assert isinstance(validator, ArgumentModel)


def test_fallback_still_validates_constraints() -> None:
    validator = argument_validator(annotated, "annotated", set())
    assert validator.validate({"count": 2}) == {"count": 2}
    with pytest.raises(
        SignatureMismatch, match="count: Input should be greater than or equal to 0"
    ):
        validator.validate({"count": -1})
    schema = validator.json_schema()["properties"]["count"]
    assert schema["description"] == "how many" and schema["minimum"] == 0
