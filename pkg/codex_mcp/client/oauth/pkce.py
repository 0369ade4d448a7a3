"""PKCE (RFC 7636, S256 only, as OAuth 2.1 asks) and the `state` of one authorization."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class Pkce:
    verifier: str = field(default_factory=lambda: _b64url(secrets.token_bytes(48)))
    state: str = field(default_factory=lambda: _b64url(secrets.token_bytes(24)))

    @property
    def challenge(self) -> str:
        return _b64url(hashlib.sha256(self.verifier.encode()).digest())
