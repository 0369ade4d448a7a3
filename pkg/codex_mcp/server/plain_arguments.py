"""Argument validation for plain signatures, on pydantic-core without pydantic (decision 10);
anything else returns None and the caller builds a pydantic model."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from pydantic_core import SchemaValidator, ValidationError
from pydantic_core import core_schema as cs

from .errors import NeedsPydantic, SignatureMismatch
from .signature import describe_validation_error

_SCALARS: dict[Any, tuple[Callable[[], Any], str]] = {
    str: (cs.str_schema, "string"),
    int: (cs.int_schema, "integer"),
    float: (cs.float_schema, "number"),
    bool: (cs.bool_schema, "boolean"),
}
_PLAIN_DEFAULTS = (str, int, float, bool, type(None))


def _translate(hint: Any) -> tuple[Any, dict[str, Any]]:
    """(pydantic-core schema, JSON Schema) for one annotation, as pydantic writes them."""
    if hint is Any:
        return cs.any_schema(), {}
    scalar = _SCALARS.get(hint)
    if scalar is not None:
        make, json_type = scalar
        return make(), {"type": json_type}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is list or (origin is list and len(args) == 1):
        item_core, item_json = _translate(args[0] if args else Any)
        return cs.list_schema(item_core), {"items": item_json, "type": "array"}
    if hint is dict or (origin is dict and len(args) == 2 and args[0] is str):
        value_core, value_json = _translate(args[1] if args else Any)
        return cs.dict_schema(cs.str_schema(), value_core), {
            "additionalProperties": value_json or True,
            "type": "object",
        }
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        inner_core, inner_json = _translate(inner)
        return cs.nullable_schema(inner_core), {"anyOf": [inner_json, {"type": "null"}]}
    if origin is Literal and args:
        kinds = {type(arg) for arg in args}
        if kinds == {str} or kinds == {int}:
            json_type = "string" if kinds == {str} else "integer"
            values = list(args)
            if len(values) == 1:
                return cs.literal_schema(values), {"const": values[0], "type": json_type}
            return cs.literal_schema(values), {"enum": values, "type": json_type}
    raise NeedsPydantic(hint)


class PlainArguments:
    """Validates a tools/call `arguments` object into keyword arguments."""

    def __init__(self, validator: SchemaValidator, schema: dict[str, Any]) -> None:
        self._validate = validator.validate_python
        self._schema = schema

    def json_schema(self) -> dict[str, Any]:
        return self._schema

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            validated: dict[str, Any] = self._validate(arguments)
        except ValidationError as exc:
            raise SignatureMismatch(describe_validation_error(exc)) from None
        return validated


def plain_arguments(
    parameters: list[inspect.Parameter], hints: dict[str, Any]
) -> PlainArguments | None:
    """A validator for these parameters, or None when one of them needs pydantic."""
    fields: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in parameters:
        hint = hints.get(param.name, Any)
        try:
            core, json_schema = _translate(hint)
        except NeedsPydantic:
            return None
        json_schema = {**json_schema, "title": param.name.title().replace("_", " ")}
        has_default = param.default is not param.empty
        if has_default:
            if not isinstance(param.default, _PLAIN_DEFAULTS):
                return None  # pydantic writes other defaults its own way
            json_schema["default"] = param.default
        else:
            required.append(param.name)
        fields[param.name] = cs.typed_dict_field(core, required=not has_default)
        properties[param.name] = json_schema
    schema: dict[str, Any] = {"properties": properties, "type": "object"}
    if required:
        schema["required"] = required
    return PlainArguments(SchemaValidator(cs.typed_dict_schema(fields)), schema)
