"""Server: define an MCP server with decorators over plain functions."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from ..core.composite import CompositeProvider
from ..core.jsonrpc import JsonObject
from ..core.provider import Provider
from ..core.server import ServerCore
from .prompts import FunctionPrompt
from .provider import FunctionProvider
from .resources import Completer, FunctionResource
from .tools import FunctionTool

if TYPE_CHECKING:
    from .skills import SkillProvider

F = TypeVar("F", bound=Callable[..., Any])
#: `Server(lifespan=...)`: called with the server, an async context manager whose yield is
#: `ctx.lifespan_context` (e.g. a function decorated with `contextlib.asynccontextmanager`).
ServerLifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]


class Server:
    """An MCP server. Register tools, resources and prompts, then `run()` it.

    ```python
    server = Server("demo")

    @server.tool(read_only=True)
    async def echo(message: str) -> str:
        "Echo a message back."
        return message

    server.run()  # stdio; server.run("http", port=8000) for Streamable HTTP
    ```

    What the tools share lives in a lifespan, entered once when the server starts (each
    worker of `--workers N` has its own) and exited when it stops:

    ```python
    @contextlib.asynccontextmanager
    async def resources(server: Server) -> AsyncIterator[aiohttp.ClientSession]:
        async with aiohttp.ClientSession() as http:
            yield http

    server = Server("demo", lifespan=resources)

    @server.tool
    async def fetch(url: str, ctx: Context) -> str:
        async with ctx.lifespan_context.get(url) as response:
            return await response.text()
    ```
    """

    def __init__(
        self,
        name: str = "codex-mcp",
        version: str | None = None,
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[JsonObject] | None = None,
        page_size: int = 1000,
        cache_ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
        request_state_keys: Sequence[bytes | str] | None = None,
        lifespan: ServerLifespan | None = None,
    ) -> None:
        """`lifespan(server)`: an async context manager entered once when the server starts
        and exited when it stops; what it yields is every request's `ctx.lifespan_context`.
        An error entering it stops the start with one line naming it. `cache_ttl_ms`/`cache_scope`: how long and for whom 2026-07-28 clients may cache
        lists, reads and discover (a resource may set its own). `request_state_keys`: the
        keys (32 bytes or more; the first signs, all verify) of input-required rounds'
        requestState, shared by every process that serves the same clients; default, a
        random key of this process."""
        from .. import __version__

        self.name = name
        self.version = version or __version__
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: Literal["public", "private"] = cache_scope
        self.request_state_keys = list(request_state_keys or [])
        self.lifespan = lifespan
        self._info_extra: JsonObject = {}
        if website_url:
            self._info_extra["websiteUrl"] = website_url
        if icons:
            self._info_extra["icons"] = icons
        self.functions = FunctionProvider()
        self._providers: list[Provider] = [self.functions]
        self._core: ServerCore | None = None
        self._skills: SkillProvider | None = None

    # -- registration ----------------------------------------------------------
    @overload
    def tool(self, fn: F) -> F: ...
    @overload
    def tool(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...
    def tool(self, fn: F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a tool. Options: name, title, description, read_only,
        destructive, idempotent, open_world, annotations, icons, input_schema,
        output_schema, structured_output, meta, run_sync_in_thread, task ("optional" or
        "required": a 2026-07-28 call may become a task; see ctx.start_task)."""

        def register(f: F) -> F:
            self.functions.add_tool(FunctionTool(f, **options))
            return f

        return register(fn) if fn is not None else register

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> None:
        self.functions.add_tool(FunctionTool(fn, **options))

    def remove_tool(self, name: str) -> None:
        self.functions.remove_tool(name)

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a resource; `{var}` in the URI makes it a template whose variables
        are passed to the function. Options: name, title, description, mime_type, size,
        annotations, icons, meta, complete={"var": list-or-function}, ttl_ms and
        cache_scope (how long and for whom a 2026-07-28 client may cache a read).
        A reader with nothing at the URI raises `ResourceNotFound(uri)`: the client gets
        the protocol's resource-not-found error (-32602, `data: {"uri": ...}`) and no
        traceback is logged; any other exception is an internal error (-32603, logged)."""

        def register(f: F) -> F:
            self.functions.add_resource(FunctionResource(f, uri, **options))
            return f

        return register

    @overload
    def prompt(self, fn: F) -> F: ...
    @overload
    def prompt(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...
    def prompt(self, fn: F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Register a prompt. Options: name, title, description, icons, meta, complete."""

        def register(f: F) -> F:
            self.functions.add_prompt(FunctionPrompt(f, **options))
            return f

        return register(fn) if fn is not None else register

    def completion(
        self, ref_type: Literal["prompt", "resource"], name: str, argument: str
    ) -> Callable[[F], F]:
        """Register a completer: fn(value[, context_arguments]) -> list of candidates."""

        def register(f: F) -> F:
            self.functions.completers[(ref_type, name, argument)] = f
            return f

        return register

    def add_completion(
        self,
        ref_type: Literal["prompt", "resource"],
        name: str,
        argument: str,
        completer: Completer,
    ) -> None:
        self.functions.completers[(ref_type, name, argument)] = completer

    # -- skills (SEP-2640; server/skills.py) -----------------------------------
    @property
    def skills(self) -> SkillProvider:
        """What serves this server's skills (made, and served, on first use)."""
        if self._skills is None:
            from .skills import SkillProvider

            provider = SkillProvider()
            self.add_provider(provider)  # refused once the server has started
            self._skills = provider
        return self._skills

    def add_skills_directory(self, root: str | os.PathLike[str]) -> None:
        """Serve every skill folder (one holding a SKILL.md) under `root` as `skill://`
        resources, with skills/list, skills/get and resources/directory/read."""
        self.skills.add_directory(root)

    def add_skill(self, name: str, description: str, instructions: str, **options: Any) -> None:
        """Serve a skill defined in code. Options: files (relative path -> text or bytes),
        prefix ("acme/billing"), frontmatter (its other fields)."""
        self.skills.add_skill(name, description, instructions, **options)

    def add_provider(self, provider: Provider) -> None:
        """Serve another provider's tools, resources and prompts too (after our own)."""
        if self._core is not None:
            raise RuntimeError("add providers before the server starts")
        self._providers.append(provider)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell sessions subscribed to `uri` that it changed."""
        self.functions.notify_resource_updated(uri)

    # -- serving ---------------------------------------------------------------
    @property
    def core(self) -> ServerCore:
        if self._core is None:
            provider = (
                self._providers[0]
                if len(self._providers) == 1
                else CompositeProvider(self._providers)
            )
            self._core = ServerCore(
                provider,
                name=self.name,
                version=self.version,
                title=self.title,
                instructions=self.instructions,
                page_size=self.page_size,
                server_info_extra=self._info_extra,
                request_state_keys=self.request_state_keys,
                cache_ttl_ms=self.cache_ttl_ms,
                cache_scope=self.cache_scope,
                lifespan=self._entered_lifespan if self.lifespan is not None else None,
            )
        return self._core

    @contextlib.asynccontextmanager
    async def _entered_lifespan(self) -> AsyncIterator[Any]:
        """The lifespan, with a failure to enter it a start-up error (one line, no traceback)."""
        from ..launch import StartupError

        assert self.lifespan is not None
        async with contextlib.AsyncExitStack() as stack:
            try:
                state = await stack.enter_async_context(self.lifespan(self))
            except Exception as error:
                raise StartupError(
                    f"server {self.name!r}: its lifespan failed to start: "
                    f"{type(error).__name__}: {error}"
                ) from error
            yield state

    def run(self, transport: Literal["stdio", "http"] = "stdio", **options: Any) -> None:
        """Serve until the client goes away (stdio) or a signal arrives (http)."""
        if transport == "stdio":
            from ..transports.stdio import run_stdio

            run_stdio(self.core, **options)
        elif transport == "http":
            from ..transports.http import run_http

            run_http(self.core, **options)
        else:
            raise ValueError(f"unknown transport {transport!r}")
