"""The `WWW-Authenticate: Bearer ...` challenge of a 401 or 403 (RFC 6750 section 3, with
RFC 9728's `resource_metadata`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# auth-param = token "=" ( token / quoted-string )
_PARAM = re.compile(r'([A-Za-z0-9_!#$%&\'*+.^`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)')


@dataclass(frozen=True, slots=True)
class Challenge:
    error: str | None = None
    scope: tuple[str, ...] | None = None
    resource_metadata: str | None = None

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
    scope = params.get("scope")
    return Challenge(
        error=params.get("error"),
        scope=tuple(scope.split()) if scope else None,
        resource_metadata=params.get("resource_metadata"),
    )
