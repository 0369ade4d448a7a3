"""The `WWW-Authenticate: Bearer ...` challenge of a 401 or 403 (RFC 6750 section 3, with
RFC 9728's `resource_metadata`)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import orjson

# auth-param = token "=" ( token / quoted-string )
_PARAM = re.compile(r'([A-Za-z0-9_!#$%&\'*+.^`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)')

_SCOPE_TOKEN = re.compile(r"(?<!\S)[\x21\x23-\x5b\x5d-\x7e]+(?!\S)")


@dataclass(frozen=True, slots=True)
class Challenge:
    error: str | None = None
    scope: tuple[str, ...] | None = None
    resource_metadata: str | None = None
    #: What the server said, in its own words: `error_description`, else the body's
    #: message (outside text: shown escaped, never trusted).
    said: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def parse_challenge(header: str | None) -> Challenge:
    """The Bearer challenge's parameters; an absent or foreign header is an empty one."""
    if not header:
        return Challenge()
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() not in ("bearer", "dpop"):
        return Challenge()
    params: dict[str, str] = {}
    for name, raw in _PARAM.findall(rest):
        value = raw[1:-1].replace('\\"', '"').replace("\\\\", "\\") if raw[:1] == '"' else raw
        params.setdefault(name.lower(), value)
    # RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ); anything else
    # is no scope (it would reach the user's terminal and an authorization request).
    scope = " ".join(_SCOPE_TOKEN.findall(params.get("scope") or ""))
    return Challenge(
        error=params.get("error"),
        scope=tuple(scope.split()) if scope else None,
        resource_metadata=params.get("resource_metadata"),
        said=params.get("error_description"),
    )


def with_body(challenge: Challenge, body: bytes) -> Challenge:
    """The challenge, with what the refusal's body says when its header said nothing: a
    JSON-RPC error's message, an OAuth error's description, else the text itself."""
    if challenge.said:
        return challenge
    text = body[:2000].decode("utf-8", "replace").strip()
    try:
        value: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        error = value.get("error")
        for candidate in (
            error.get("message") if isinstance(error, dict) else None,
            value.get("error_description"),
            error,
            value.get("message"),
        ):
            if isinstance(candidate, str) and candidate:
                text = candidate
                break
    return dataclasses.replace(challenge, said=text or None)
