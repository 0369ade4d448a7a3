"""FunctionProvider: serves the tools, resources and prompts registered on a Server."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from ..core.context import RequestContext
from ..core.jsonrpc import JsonObject
from ..core.provider import Provider, ResourceNotFound, UnknownPrompt, UnknownTool
from .prompts import FunctionPrompt
from .resources import Completer, FunctionResource, run_completer
from .tools import FunctionTool


class FunctionProvider(Provider):
    def __init__(self) -> None:
        super().__init__()
        self.tools: dict[str, FunctionTool] = {}
        self.resources: dict[str, FunctionResource] = {}
        self.prompts: dict[str, FunctionPrompt] = {}
        self.completers: dict[tuple[str, str, str], Completer] = {}
        # Listings are rebuilt only when something is added or removed.
        self._tool_list: list[JsonObject] | None = None

    @property
    def features(self) -> frozenset[str]:
        features = {"tools"}  # always: Codex lists tools on every server
        if self.resources:
            features.add("resources")
        if self.prompts:
            features.add("prompts")
        if (
            self.completers
            or any(r.completers for r in self.resources.values())
            or any(p.completers for p in self.prompts.values())
        ):
            features.add("completions")
        return frozenset(features)

    # -- registration ----------------------------------------------------------
    def add_tool(self, tool: FunctionTool) -> None:
        self.tools[tool.name] = tool
        self._tool_list = None
        self.notify_list_changed("tools")

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is not None:
            self._tool_list = None
            self.notify_list_changed("tools")

    def add_resource(self, resource: FunctionResource) -> None:
        self.resources[resource.uri] = resource
        self.notify_list_changed("resources")

    def remove_resource(self, uri: str) -> None:
        if self.resources.pop(uri, None) is not None:
            self.notify_list_changed("resources")

    def add_prompt(self, prompt: FunctionPrompt) -> None:
        self.prompts[prompt.name] = prompt
        self.notify_list_changed("prompts")

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is not None:
            self.notify_list_changed("prompts")

    # -- tools -----------------------------------------------------------------
    async def list_tools(self, ctx: RequestContext) -> Sequence[JsonObject]:
        if self._tool_list is None:
            self._tool_list = [tool.definition for tool in self.tools.values()]
        return self._tool_list

    def call_tool(
        self, name: str, arguments: JsonObject, ctx: RequestContext
    ) -> Awaitable[JsonObject]:
        tool = self.tools.get(name)
        if tool is None:
            raise UnknownTool(name)
        return tool.start(arguments, ctx)

    # -- resources -------------------------------------------------------------
    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [r.definition for r in self.resources.values() if not r.is_template]

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [r.definition for r in self.resources.values() if r.is_template]

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        exact = self.resources.get(uri)
        if exact is not None and not exact.is_template:
            return await exact.read(uri, {}, ctx)
        for resource in self.resources.values():
            variables = resource.match(uri) if resource.is_template else None
            if variables is not None:
                return await resource.read(uri, variables, ctx)
        raise ResourceNotFound(uri)

    # -- prompts ---------------------------------------------------------------
    async def list_prompts(self, ctx: RequestContext) -> Sequence[JsonObject]:
        return [p.definition for p in self.prompts.values()]

    async def get_prompt(
        self, name: str, arguments: dict[str, str], ctx: RequestContext
    ) -> JsonObject:
        prompt = self.prompts.get(name)
        if prompt is None:
            raise UnknownPrompt(name)
        return await prompt.get(arguments, ctx)

    # -- completion ------------------------------------------------------------
    async def complete(
        self,
        ref: JsonObject,
        argument: JsonObject,
        context_arguments: dict[str, str],
        ctx: RequestContext,
    ) -> JsonObject | None:
        completer = self._completer_for(ref, str(argument.get("name")))
        if completer is None:
            return None
        values = await run_completer(completer, str(argument.get("value", "")), context_arguments)
        return {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}

    def _completer_for(self, ref: JsonObject, argument: str) -> Completer | None:
        if ref.get("type") == "ref/prompt":
            key = ("prompt", str(ref.get("name")), argument)
            prompt = self.prompts.get(key[1])
            found: Any = prompt.completers.get(argument) if prompt else None
        else:
            key = ("resource", str(ref.get("uri")), argument)
            resource = self.resources.get(key[1])
            found = resource.completers.get(argument) if resource else None
        return found if found is not None else self.completers.get(key)
