"""The user's browser as the authorizer, with a one-shot callback server on a loopback port
(specs/oauth.md; specs/isolation.md, "The OAuth client and its token store")."""

from __future__ import annotations

import asyncio
import hmac
import sys
import webbrowser
from typing import TextIO
from urllib.parse import parse_qs, urlsplit

from aiohttp import web

from .errors import OAuthError, shown

_DONE_PAGE = "<html><body><p>Authorization complete: you can close this page.</p></body></html>"
_NOT_OURS_PAGE = (
    "<html><body><p>This is not the answer to a login in progress here.</p></body></html>"
)
#: Callbacks that do not answer the login before it gives up (something is guessing).
MAX_BAD_CALLBACKS = 20


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
        self._state = b""
        self._bad_callbacks = 0

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
        arrived = self._arrived
        if arrived is None or arrived.done():
            return web.Response(status=400, text=_NOT_OURS_PAGE, content_type="text/html")
        state = request.query.get("state", "").encode()
        if not hmac.compare_digest(state, self._state):
            # Nothing else in it is believed (an error and its text included).
            self._bad_callbacks += 1
            if self._bad_callbacks >= MAX_BAD_CALLBACKS:
                arrived.set_exception(
                    OAuthError(
                        f"{self._bad_callbacks} requests to the login callback did not answer "
                        "our login (wrong or no state): giving up; another program may be "
                        "calling it"
                    )
                )
            return web.Response(status=400, text=_NOT_OURS_PAGE, content_type="text/html")
        arrived.set_result(str(request.url))
        return web.Response(text=_DONE_PAGE, content_type="text/html")

    async def authorize(self, url: str) -> str:
        if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
            raise OAuthError(f"not opening {shown(url)}: it has spaces or control characters")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise OAuthError(f"not opening {shown(url)} in a browser: not an http(s) URL")
        states = parse_qs(parts.query).get("state")
        if not states:
            raise OAuthError(f"not opening {shown(url)}: it carries no state to check")
        self._state, self._bad_callbacks = states[0].encode(), 0
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
