"""What tools, resources and prompts made from functions share: the function and how it is
called (awaited, in a worker thread, or on the loop), its context parameter, and the
descriptive part of its wire definition."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, TypedDict, Unpack

from ..core.jsonrpc import JsonObject
from .signature import context_parameter, first_line, resolved_hints


class CommonOptions(TypedDict, total=False):
    """Options every component takes."""

    #: Wire name (default: the function's name).
    name: str | None
    title: str | None
    #: Default: the first line of the docstring.
    description: str | None
    icons: list[JsonObject] | None
    meta: JsonObject | None
    #: A plain function runs in a worker thread, so a blocking one never stalls the loop
    #: (every session); False keeps a quick pure function on the loop.
    run_sync_in_thread: bool


class FunctionComponent:
    def __init__(self, fn: Callable[..., Any], **options: Unpack[CommonOptions]) -> None:
        self.fn = fn
        self.name = options.get("name") or fn.__name__
        self.title = options.get("title")
        description = options.get("description")
        self.description = description if description is not None else first_line(fn.__doc__)
        self.icons = options.get("icons")
        self.meta = options.get("meta")
        self.run_sync_in_thread = options.get("run_sync_in_thread", True)
        self.hints = resolved_hints(fn)
        self.context_param = context_parameter(fn, self.hints)
        # A callable object with an async __call__ counts as async too.
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004
        )

    async def invoke(self, kwargs: dict[str, Any]) -> Any:
        if self.is_async or not self.run_sync_in_thread:
            value = self.fn(**kwargs)
            return await value if inspect.isawaitable(value) else value
        return await asyncio.to_thread(self.fn, **kwargs)

    def describe(self, **fields: Any) -> JsonObject:
        """The wire definition: name, title, description, then each field given a value
        (in the order given), then icons and _meta."""
        definition: JsonObject = {"name": self.name}
        if self.title:
            definition["title"] = self.title
        if self.description:
            definition["description"] = self.description
        for key, value in (*fields.items(), ("icons", self.icons), ("_meta", self.meta)):
            if value is not None and value != "" and value != {}:
                definition[key] = value
        return definition
