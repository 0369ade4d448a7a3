"""DPoP (RFC 9449): tokens bound to a key of ours (specs/oauth.md, "The client's OAuth")."""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ALGORITHM = "ES256"


def b64url(data: bytes) -> str:
    """Base64url without padding (JOSE, and PKCE)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DpopKey:
    def __init__(self, pem: str | None = None) -> None:
        if pem is None:
            self._key = ec.generate_private_key(ec.SECP256R1())
        else:
            loaded = serialization.load_pem_private_key(pem.encode(), password=None)
            if not isinstance(loaded, ec.EllipticCurvePrivateKey):
                raise ValueError("a DPoP key must be an EC private key")
            self._key = loaded
        numbers = self._key.public_key().public_numbers()
        self.public_jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
        }
        #: The latest nonce each server asked for (RFC 9449 sections 8 and 9), by origin.
        self.nonces: dict[str, str] = {}

    @property
    def pem(self) -> str:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": str(uuid.uuid4()),
            "htm": method,
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        nonce = self.nonces.get(f"{parts.scheme}://{parts.netloc}")
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        headers = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers=headers)

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep a server's DPoP-Nonce; True when it is new (worth a retry)."""
        if not nonce:
            return False
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if self.nonces.get(origin) == nonce:
            return False
        self.nonces[origin] = nonce
        return True
