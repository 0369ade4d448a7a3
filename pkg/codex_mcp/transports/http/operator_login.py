"""The operator's browser login at `{prefix}/login`: a signed cookie for the status page and
`/metrics` (decision 52; specs/observability.md, "Status page")."""

from __future__ import annotations

import base64
import hmac
import html
import secrets
import time
from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qs

from aiohttp import web

from ...observe.status_page import PAGE_HEADERS
from .oauth import Grant

COOKIE: Final = "codex_mcp_operator"
#: How long a login lasts (an OAuth login: no longer than its token).
LOGIN_SECONDS: Final = 8 * 3600
#: A login form's body: a token (a JWT is a few KB at most) and its field name.
LOGIN_BODY_BYTES: Final = 16 * 1024
_COOKIE_CHARS: Final = 256
FORM = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>codex-mcp status: log in</title>
<style>body{{font:14px/1.45 system-ui,sans-serif;margin:3rem auto;max-width:28rem;color:#1d2330}}
input{{width:100%;padding:.4rem;margin:.4rem 0;box-sizing:border-box}}.said{{color:#b3261e}}</style>
</head><body><h1>codex-mcp status</h1>
<p>Paste this server's bearer token (or an OAuth access token with the operator scope).
It is not kept: the browser gets a cookie for this page and <code>/metrics</code> only.</p>
<p class="said" data-test="said">{said}</p>
<form method="post" action="{action}">
<input type="password" name="token" autocomplete="off" aria-label="token" autofocus required>
<input type="submit" value="Log in"></form></body></html>
"""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class OperatorLogin:
    def __init__(self, prefix: str, secret: bytes | None, static_fingerprints: Iterable[str]):
        self.path = f"{prefix}/login"
        self.cookie_path = f"{prefix}/"
        # One key per server (or per --workers supervisor): nothing else can make or
        # check our cookies, and a restart ends every login.
        self._key = hmac.digest(
            secret or secrets.token_bytes(32), b"codex-mcp operator cookie v1", "sha256"
        )
        self._static = frozenset(self._bind(f) for f in static_fingerprints)

    def _bind(self, fingerprint: str) -> str:
        return _b64(hmac.digest(self._key, b"bound\n" + fingerprint.encode(), "sha256")[:18])

    def _mac(self, payload: str) -> str:
        return _b64(hmac.digest(self._key, b"cookie\n" + payload.encode(), "sha256"))

    def issue(self, fingerprint: str, grant: Grant | None, now: float) -> tuple[str, int]:
        """A cookie's value for this credential, and its lifetime in seconds."""
        expires = now + LOGIN_SECONDS
        if grant is not None and grant.expires is not None:
            expires = min(expires, grant.expires)
        kind = "s" if grant is None else "o"
        payload = f"v1.{int(expires)}.{kind}{self._bind(fingerprint)}"
        return f"{payload}.{self._mac(payload)}", max(0, int(expires - now))

    def admit(self, request: web.Request) -> str | None:
        """The bound credential of the request's valid cookie, or None (no cookie, or one
        that is altered, expired, another server's, or a removed static token's)."""
        value = request.cookies.get(COOKIE)
        if value is None or len(value) > _COOKIE_CHARS:
            return None
        payload, _, mac = value.rpartition(".")
        if not hmac.compare_digest(mac.encode(errors="replace"), self._mac(payload).encode()):
            return None
        parts = payload.split(".")  # ours, since the MAC matched
        if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdecimal():
            return None
        _, expires, bound = parts
        if int(expires) <= time.time():
            return None
        if bound.startswith("s") and bound[1:] not in self._static:
            return None  # the token was removed from the configuration
        return f"operator-login:{bound}"

    async def read_token(self, request: web.Request) -> str | web.Response:
        """The token a login form sent, or the refusal of a body that is not one."""
        if request.content_type != "application/x-www-form-urlencoded":
            return self.form(415, "Send the form (application/x-www-form-urlencoded).")
        body = b""
        while len(body) <= LOGIN_BODY_BYTES:  # read() returns what has arrived so far
            chunk = await request.content.read(LOGIN_BODY_BYTES + 1 - len(body))
            if not chunk:
                break
            body += chunk
        if len(body) > LOGIN_BODY_BYTES:
            return self.form(413, "That is too long for a token.")
        try:
            fields = parse_qs(body.decode("utf-8"), max_num_fields=4)
        except (UnicodeDecodeError, ValueError):
            return self.form(400, "That form could not be read.")
        tokens = fields.get("token", [])
        if len(tokens) != 1 or not tokens[0].strip():
            return self.form(400, "Paste a token.")
        return tokens[0].strip()

    def form(
        self, status: int, said: str = "", headers: dict[str, str] | None = None
    ) -> web.Response:
        text = FORM.format(said=html.escape(said), action=html.escape(self.path))
        response = web.Response(status=status, text=text, content_type="text/html")
        response.headers.update(PAGE_HEADERS)
        if headers:
            response.headers.update(headers)
        return response

    def logged_in(self, fingerprint: str, grant: Grant | None, secure: bool) -> web.Response:
        """303 to the status page, with the cookie (Secure when the client came over TLS)."""
        value, seconds = self.issue(fingerprint, grant, time.time())
        response = web.HTTPSeeOther(self.cookie_path)
        response.set_cookie(
            COOKIE,
            value,
            max_age=seconds,
            path=self.cookie_path,
            httponly=True,
            samesite="Strict",
            secure=secure,
        )
        response.headers.update(PAGE_HEADERS)
        return response


__all__ = ["COOKIE", "OperatorLogin"]
