"""Prompts made from plain functions: arguments from the signature, messages from the result."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.context import RequestContext
from ..core.jsonrpc import JsonObject, invalid_params
from .content import Content, to_blocks
from .resources import Completer
from .signature import (
    InvalidArguments,
    argument_validator,
    context_parameter,
    first_line,
    resolved_hints,
)


@dataclass(slots=True)
class Message:
    """One prompt message; content is a str or a content block."""

    role: str
    content: str | Content

    def to_json(self) -> JsonObject:
        return {"role": self.role, "content": to_blocks(self.content)[0]}


class FunctionPrompt:
    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[JsonObject] | None = None,
        meta: JsonObject | None = None,
        complete: dict[str, Completer] | None = None,
        run_sync_in_thread: bool = True,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.run_sync_in_thread = run_sync_in_thread
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = context_parameter(fn, resolved_hints(fn))
        skip = {self.context_param} if self.context_param else set()
        self.arguments = argument_validator(fn, self.name, skip)
        self.completers = dict(complete or {})
        definition: JsonObject = {"name": self.name}
        if title:
            definition["title"] = title
        doc = description if description is not None else first_line(fn.__doc__)
        if doc:
            definition["description"] = doc
        schema = self.arguments.json_schema()
        required = set(schema.get("required", []))
        definition["arguments"] = [
            _argument(arg, prop, arg in required) for arg, prop in schema["properties"].items()
        ]
        if icons:
            definition["icons"] = icons
        if meta:
            definition["_meta"] = meta
        self.definition = definition

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> JsonObject:
        try:
            kwargs = self.arguments.validate(arguments)
        except InvalidArguments as exc:
            raise invalid_params(f"Invalid arguments for prompt '{self.name}': {exc}") from None
        if self.context_param:
            kwargs[self.context_param] = ctx
        if self.is_async or not self.run_sync_in_thread:
            value = self.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        else:  # a blocking prompt must not stall every session
            value = await asyncio.to_thread(self.fn, **kwargs)
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
