"""Settings read from flags, the environment (CODEX_MCP_*) and a .env file, then validated.

The fields, defaults, help and bounds are the declarations in defaults.py; this module
turns one into a pydantic-settings model (which reads the environment and .env and
checks every value) and hands back the plain declaration, filled in. Importing it
loads pydantic-settings, which is why the stdio entrypoint avoids it when it can.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, Field, create_model
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .defaults import ENV_FILE, ENV_PREFIX

D = TypeVar("D")


def _split_commas(value: object) -> object:
    """'a,b' (the environment) or ['a,b', 'c'] (repeated flags) -> ['a', 'b', 'c']."""
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list | tuple):
        return [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    return value


CommaList = Annotated[list[str], NoDecode, BeforeValidator(_split_commas)]


class _SettingsBase(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=ENV_FILE, env_file_encoding="utf-8", extra="ignore"
    )


@functools.cache
def settings_model(declaration: type[Any]) -> type[BaseSettings]:
    """The pydantic-settings model of a declaration from defaults.py."""
    hints = typing.get_type_hints(declaration)
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(declaration):
        annotation = hints[field.name]
        if typing.get_origin(annotation) is Sequence:
            annotation = CommaList
        info = field.metadata
        default = list(field.default) if isinstance(field.default, tuple) else field.default
        fields[field.name] = (
            annotation,
            Field(default, description=info["help"], **info["checks"]),
        )
    return create_model(declaration.__name__ + "Settings", __base__=_SettingsBase, **fields)


def read_settings(declaration: type[D], given: Mapping[str, Any]) -> D:
    """`given` (the flags on the command line) over the environment and .env over the
    defaults, validated; raises pydantic.ValidationError naming the bad fields."""
    model = settings_model(declaration)(**given)  # type: ignore[arg-type]
    values = {}
    for field in dataclasses.fields(declaration):  # type: ignore[arg-type]
        value = getattr(model, field.name)
        values[field.name] = tuple(value) if isinstance(value, list) else value
    return declaration(**values)
