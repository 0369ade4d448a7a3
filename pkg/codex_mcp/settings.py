"""Settings read from flags, the environment (CODEX_MCP_*) and a .env file, then validated.

The fields, defaults, help and bounds are the declarations in defaults.py. When neither
the environment nor a .env file sets any of them (the usual start: flags only), the flags
argparse has already typed are checked against the declared bounds here and filled in
over the defaults; otherwise the pydantic-settings model (settings_model.py) reads the
environment and .env and checks everything. Either way the plain declaration comes back,
filled in, and a bad value raises SettingsError.
"""

from __future__ import annotations

import dataclasses
import operator
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .defaults import configured_by_environment, field_types, split_commas

D = TypeVar("D")


class SettingsError(ValueError):
    """Bad values: (field name, what is wrong) for each."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems))
        self.problems = problems


#: Each bound's test, and pydantic's wording when it fails (a flag reads the same either way).
_BOUNDS: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
    "ge": (operator.ge, "greater than or equal to"),
    "gt": (operator.gt, "greater than"),
    "le": (operator.le, "less than or equal to"),
}


def read_settings(declaration: type[D], given: Mapping[str, Any]) -> D:
    """`given` (the flags on the command line, typed by argparse) over the environment and
    .env over the defaults, validated; raises SettingsError naming the bad fields."""
    if configured_by_environment(declaration):
        from .settings_model import read_with_model

        return declaration(**read_with_model(declaration, given))
    hints = field_types(declaration)
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for field in dataclasses.fields(declaration):  # type: ignore[arg-type]
        if field.name not in given:
            continue
        value = _typed(hints[field.name], given[field.name])
        for check, bound in field.metadata["checks"].items():
            holds, wording = _BOUNDS[check]
            if value is not None and not holds(value, bound):
                problems.append((field.name, f"Input should be {wording} {bound}"))
        values[field.name] = value
    if problems:
        raise SettingsError(problems)
    return declaration(**values)


def _typed(hint: Any, value: Any) -> Any:
    """A flag's value as the declaration types it: argparse gives paths as strings and
    repeated lists as lists of comma-separated strings."""
    if typing.get_origin(hint) is Sequence:
        return tuple(typing.cast(list[str], split_commas(value)))
    if hint is Path or Path in typing.get_args(hint):
        return Path(value)
    return value
