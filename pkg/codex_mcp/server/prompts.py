"""Prompts made from plain functions: arguments from the signature, messages from the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Unpack

from ..core.context import RequestContext
from ..core.jsonrpc import JsonObject, invalid_params
from .component import CommonOptions, FunctionComponent
from .content import Content, to_blocks
from .errors import SignatureMismatch
from .resources import Completer
from .signature import argument_validator


@dataclass(slots=True)
class Message:
    """One prompt message; content is a str or a content block."""

    role: str
    content: str | Content

    def to_json(self) -> JsonObject:
        return {"role": self.role, "content": to_blocks(self.content)[0]}


class FunctionPrompt(FunctionComponent):
    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        complete: dict[str, Completer] | None = None,
        **options: Unpack[CommonOptions],
    ) -> None:
        super().__init__(fn, **options)
        skip = {self.context_param} if self.context_param else set()
        self.arguments = argument_validator(fn, self.name, skip)
        self.completers = dict(complete or {})
        schema = self.arguments.json_schema()
        required = set(schema.get("required", []))
        self.definition = self.describe(
            arguments=[
                _argument(arg, prop, arg in required) for arg, prop in schema["properties"].items()
            ]
        )

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> JsonObject:
        try:
            kwargs = self.arguments.validate(arguments)
        except SignatureMismatch as exc:
            raise invalid_params(f"Invalid arguments for prompt '{self.name}': {exc}") from None
        if self.context_param:
            kwargs[self.context_param] = ctx
        value = await self.invoke(kwargs)
        result: JsonObject = {"messages": _messages(value)}
        if "description" in self.definition:
            result["description"] = self.definition["description"]
        return result


def _argument(name: str, prop: JsonObject, required: bool) -> JsonObject:
    argument: JsonObject = {"name": name, "required": required}
    if "description" in prop:
        argument["description"] = prop["description"]
    if "title" in prop and prop["title"] != name.replace("_", " ").title():
        argument["title"] = prop["title"]
    return argument


def _messages(value: Any) -> list[JsonObject]:
    if isinstance(value, dict) and "messages" in value:
        return list(value["messages"])
    if isinstance(value, str | Content | Message):
        value = [value]
    messages = []
    for item in value:
        if isinstance(item, Message):
            messages.append(item.to_json())
        elif isinstance(item, dict):
            messages.append(item)
        else:
            messages.append({"role": "user", "content": to_blocks(item)[0]})
    return messages
