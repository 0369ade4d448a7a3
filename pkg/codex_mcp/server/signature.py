"""Turning a Python function's signature into a validated JSON Schema interface; pydantic is
imported on first use, so a stdio server answers `initialize` before paying for it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, get_type_hints

from ..core.context import RequestContext
from .errors import SignatureMismatch

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError


def context_parameter(fn: Callable[..., Any], hints: dict[str, Any]) -> str | None:
    """The name of the parameter annotated with Context, if any."""
    for name in inspect.signature(fn).parameters:
        hint = hints.get(name)
        if isinstance(hint, type) and issubclass(hint, RequestContext):
            return name
    return None


def resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        return dict(getattr(fn, "__annotations__", {}))


class Arguments(Protocol):
    def json_schema(self) -> dict[str, Any]: ...
    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]: ...


def argument_validator(fn: Callable[..., Any], name: str, skip: set[str]) -> Arguments:
    """The fn's parameters (minus `skip`) as a validator: plain ones on pydantic-core
    alone, anything richer as a pydantic model."""
    hints = resolved_hints(fn)
    parameters = [
        param
        for param in inspect.signature(fn).parameters.values()
        if param.name not in skip and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    ]
    from .plain_arguments import plain_arguments  # imports pydantic-core: not before it's needed

    plain = plain_arguments(parameters, hints)
    if plain is not None:
        return plain
    return ArgumentModel(name, parameters, hints)


class ArgumentModel:
    """A pydantic model built from a function's parameters."""

    def __init__(
        self, name: str, parameters: list[inspect.Parameter], hints: dict[str, Any]
    ) -> None:
        from pydantic import ConfigDict, ValidationError, create_model

        fields: dict[str, Any] = {}
        for param in parameters:
            annotation = hints.get(param.name, Any)
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (annotation, default)
        self.model: type[BaseModel] = create_model(
            f"{name}Arguments",
            __config__=ConfigDict(arbitrary_types_allowed=True),
            **fields,
        )
        self._validate = self.model.__pydantic_validator__.validate_python
        self._error = ValidationError

    def json_schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        return schema

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments; raises SignatureMismatch."""
        try:
            instance = self._validate(arguments)
        except self._error as exc:
            raise SignatureMismatch(describe_validation_error(exc)) from None
        return dict(instance.__dict__)  # a model's __dict__ holds exactly its fields


def describe_validation_error(exc: ValidationError) -> str:
    """'field: problem' for each error, so the model can fix its call."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "(arguments)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def first_line(doc: str | None) -> str | None:
    return inspect.cleandoc(doc) if doc else None
