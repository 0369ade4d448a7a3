"""An authorization server of the tests' own on 127.0.0.1 (RFC 8414 metadata and a JWKS the
test may replace), and the RS256 tokens it signs."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

KID = "k1"


class Issuer:
    """An authorization server on 127.0.0.1, in a thread and event loop of its own: RFC
    8414 metadata naming its JWKS, whose body (and the metadata's) the test may replace."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        self.good_jwks = json.dumps({"keys": [{**public, "kid": KID, "use": "sig"}]}).encode()
        self.jwks: bytes | Iterator[bytes] = self.good_jwks
        self.metadata: bytes | None = None  # None: the real one
        self.jwks_fetches = 0
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.started.wait(10), "the issuer did not start"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_get("/.well-known/oauth-authorization-server", self._metadata)
        app.router.add_get("/jwks", self._jwks)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        self.started.set()
        self.loop.run_forever()

    async def _metadata(self, request: web.Request) -> web.Response:
        body = self.metadata or json.dumps({"issuer": self.url, "jwks_uri": f"{self.url}/jwks"})
        return web.Response(body=body, content_type="application/json")

    async def _jwks(self, request: web.Request) -> web.StreamResponse:
        self.jwks_fetches += 1
        body = self.jwks
        if isinstance(body, bytes):
            return web.Response(body=body, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        try:
            for chunk in body:
                await response.write(chunk)
        except ConnectionError:
            pass  # the reader stopped reading: what a cap does
        return response

    def token(self, audience: str, **claims: Any) -> str:
        payload = {"iss": self.url, "aud": audience, "sub": "alice", "exp": time.time() + 600}
        return jwt.encode({**payload, **claims}, self.key, "RS256", headers={"kid": KID})

    def sign(self, data: bytes) -> bytes:
        """An RS256 signature by the issuer's key."""
        return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
