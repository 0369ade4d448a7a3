"""The pydantic-settings model of a declaration from settings.py: the one reader of the
environment and .env, and the one validator (specs/decisions.md, 56)."""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationError, create_model
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .settings import ENV_FILE, ENV_PREFIX, SettingsError, field_types, split_commas

CommaList = Annotated[list[str], NoDecode, BeforeValidator(split_commas)]


class _SettingsBase(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=ENV_FILE, env_file_encoding="utf-8", extra="ignore"
    )


@functools.cache
def settings_model(declaration: type[Any]) -> type[BaseSettings]:
    """The pydantic-settings model of a declaration from settings.py."""
    hints = field_types(declaration)
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(declaration):
        annotation = hints[field.name]
        if typing.get_origin(annotation) is Sequence:
            annotation = CommaList
        default = list(field.default) if isinstance(field.default, tuple) else field.default
        info = Field(default, description=field.metadata["help"], **field.metadata["checks"])
        fields[field.name] = (annotation, info)
    return create_model(declaration.__name__ + "Settings", __base__=_SettingsBase, **fields)


def read_with_model(declaration: type[Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every field's value: `given` over the environment and .env over the defaults,
    validated; raises SettingsError naming the bad fields."""
    try:
        model = settings_model(declaration)(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise SettingsError(
            [(str(error["loc"][0]) if error["loc"] else "", error["msg"]) for error in exc.errors()]
        ) from None
    values = {field.name: getattr(model, field.name) for field in dataclasses.fields(declaration)}
    return {
        name: tuple(value) if isinstance(value, list) else value for name, value in values.items()
    }
