"""The user's browser as the authorizer: a one-shot HTTP server on a loopback port takes
the redirect back (RFC 8252's native-app flow); the authorization URL is opened in the
browser, or printed when none can be opened (a remote shell)."""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from typing import TextIO

from aiohttp import web

from .errors import OAuthError

_DONE_PAGE = "<html><body><p>Authorization complete: you can close this page.</p></body></html>"


class LoopbackAuthorizer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 300.0,
        open_browser: bool = True,
        out: TextIO | None = None,
    ) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.open_browser = open_browser
        self.out = out or sys.stderr
        self._runner: web.AppRunner | None = None
        self._arrived: asyncio.Future[str] | None = None

    @property
    def redirect_uri(self) -> str:
        if self._runner is None:
            raise RuntimeError("use `async with LoopbackAuthorizer() as browser` first")
        return f"http://{self.host}:{self.port}/callback"

    async def __aenter__(self) -> LoopbackAuthorizer:
        app = web.Application()
        app.router.add_get("/callback", self._callback)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = self._runner.addresses[0][1]  # the port the system chose for 0
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _callback(self, request: web.Request) -> web.Response:
        if self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(str(request.url))
        return web.Response(text=_DONE_PAGE, content_type="text/html")

    async def authorize(self, url: str) -> str:
        self._arrived = asyncio.get_running_loop().create_future()
        opened = False
        if self.open_browser:
            try:
                opened = webbrowser.open(url)
            except webbrowser.Error:
                opened = False
        if not opened:
            print(f"Open this URL in a browser to authorize:\n{url}", file=self.out, flush=True)
        else:
            print(f"Authorizing in your browser (or open {url})", file=self.out, flush=True)
        try:
            return await asyncio.wait_for(self._arrived, self.timeout)
        except TimeoutError:
            raise OAuthError(f"no authorization came back within {self.timeout:.0f} s") from None
