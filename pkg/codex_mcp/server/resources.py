"""Resources and resource templates made from plain functions."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal, Unpack

import orjson

from ..core import uri_template
from ..core.context import RequestContext
from ..core.jsonrpc import JsonObject
from .component import CommonOptions, FunctionComponent
from .content import ResourceContents

Completer = Callable[..., Any] | Sequence[str]


class FunctionResource(FunctionComponent):
    """A resource at a fixed URI, or a template (`{var}` in the URI) matched on read."""

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: JsonObject | None = None,
        complete: dict[str, Completer] | None = None,
        ttl_ms: int | None = None,
        cache_scope: Literal["public", "private"] | None = None,
        **options: Unpack[CommonOptions],
    ) -> None:
        super().__init__(fn, **options)
        self.uri = uri
        #: Cache hints for this resource's reads (2026-07-28); None: the server's.
        self.cache_hints = (ttl_ms, cache_scope) if ttl_ms is not None or cache_scope else None
        self.mime_type = mime_type
        self.variables = uri_template.variables(uri)
        self.is_template = bool(self.variables)
        self.completers = dict(complete or {})
        self.definition = self.describe(
            **{"uriTemplate" if self.is_template else "uri": uri},
            mimeType=mime_type,
            size=size,
            annotations=annotations,
        )

    def match(self, uri: str) -> dict[str, str] | None:
        if not self.is_template:
            return {} if uri == self.uri else None
        return uri_template.match(self.uri, uri)

    async def read(
        self, uri: str, variables: dict[str, str], ctx: RequestContext
    ) -> list[JsonObject]:
        kwargs: dict[str, Any] = dict(variables)
        if self.context_param:
            kwargs[self.context_param] = ctx
        if self.cache_hints is not None:
            ctx.set_cache_hints(*self.cache_hints)
        return self._contents(uri, await self.invoke(kwargs))

    def _contents(self, uri: str, value: Any) -> list[JsonObject]:
        if isinstance(value, ResourceContents):
            return [value.to_json()]
        if isinstance(value, list) and all(isinstance(v, ResourceContents) for v in value):
            return [v.to_json() for v in value]
        mime = self.mime_type
        if isinstance(value, bytes | bytearray):
            return [
                ResourceContents(
                    uri, blob=bytes(value), mime_type=mime or "application/octet-stream"
                ).to_json()
            ]
        if isinstance(value, str):
            return [ResourceContents(uri, text=value, mime_type=mime or "text/plain").to_json()]
        text = orjson.dumps(value, default=_jsonable).decode()
        return [ResourceContents(uri, text=text, mime_type=mime or "application/json").to_json()]


def _jsonable(value: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Any).dump_python(value, mode="json")


async def run_completer(completer: Completer, value: str, context: dict[str, str]) -> list[str]:
    """A completer is a list of candidates (prefix-filtered) or a function(value[, context])."""
    if not callable(completer):
        return [c for c in completer if c.startswith(value)]
    parameters = inspect.signature(completer).parameters
    result = completer(value, context) if len(parameters) >= 2 else completer(value)
    if inspect.isawaitable(result):
        result = await result
    return [str(v) for v in result]
