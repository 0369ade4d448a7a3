"""The external decision point: one HTTP POST per decision to a configured URL (OPA's data
API shape: `{"input": {...}}` in, `{"result": true|false}` or `{"result": {"allow": ...}}`
out), at most `max_concurrent` open at once, each with its own timeout, a bounded read,
no redirects, and every failure a deny (specs/policy.md, "Hook")."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import orjson

from .rules import Caller, Target

if TYPE_CHECKING:
    import aiohttp

    from .config import HookConfig

#: The most answers the cache keeps (oldest dropped first).
CACHE_ENTRIES = 1024


class HookFailed(Exception):
    """The hook gave no usable answer (down, slow, redirected, garbage): the caller denies."""


def hook_input(caller: Caller, target: Target, action: str) -> dict[str, Any]:
    """What the hook is told: never a token (the principal is its fingerprint)."""
    return {
        "principal": caller.principal,
        "subject": caller.subject,
        "scopes": sorted(caller.scopes) if caller.scopes is not None else None,
        "session": caller.session,
        "kind": target.kind,
        "name": target.name,
        "child": target.child,
        target.kind: target.own_name,
        "action": action,
    }


def _answer(document: Any) -> bool:
    """`{"result": bool}`, `{"result": {"allow": bool}}` or `{"allow": bool}`; anything
    else is garbage."""
    if isinstance(document, dict):
        result = document.get("result", document)
        if type(result) is bool:
            return result
        if isinstance(result, dict) and type(result.get("allow")) is bool:
            return bool(result["allow"])
    raise HookFailed("its answer is neither {'result': bool} nor {'result': {'allow': bool}}")


class DecisionHook:
    def __init__(self, config: HookConfig) -> None:
        self.config = config
        self._http: aiohttp.ClientSession | None = None
        #: Exact input (encoded) -> (answer, when it expires). Only real answers are kept,
        #: never a failure; the key is the whole input, so no caller reads another's.
        self._cache: OrderedDict[bytes, tuple[bool, float]] = OrderedDict()
        #: A question waits here for its turn; its timeout starts when it is sent, so a
        #: long listing's tail is not denied for having queued behind its head.
        self._turns = asyncio.Semaphore(config.max_concurrent)

    async def allows(self, caller: Caller, target: Target, action: str) -> bool:
        """The hook's answer; HookFailed when there is none."""
        body = orjson.dumps({"input": hook_input(caller, target, action)})
        ttl = self.config.cache_ttl_sec
        if ttl > 0:
            kept = self._cache.get(body)
            if kept is not None and kept[1] > time.monotonic():
                return kept[0]
        async with self._turns:
            answer = await self._ask(body)
        if ttl > 0:
            self._cache[body] = (answer, time.monotonic() + ttl)
            self._cache.move_to_end(body)
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return answer

    async def _ask(self, body: bytes) -> bool:
        import aiohttp

        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.config.max_concurrent), trust_env=False
            )
        limit = self.config.max_response_bytes
        try:
            async with asyncio.timeout(self.config.timeout_sec):
                async with self._http.post(
                    self.config.url,
                    data=body,
                    headers={"Content-Type": "application/json"},
                    allow_redirects=False,
                ) as reply:
                    if reply.status != 200:
                        raise HookFailed(f"it answered HTTP {reply.status}")
                    if (reply.content_length or 0) > limit:
                        raise HookFailed(f"its answer is over {limit} bytes")
                    data = b""
                    while chunk := await reply.content.read(limit + 1 - len(data)):
                        data += chunk
                        if len(data) > limit:
                            raise HookFailed(f"its answer is over {limit} bytes")
        except TimeoutError:
            raise HookFailed(f"no answer within {self.config.timeout_sec:g} s") from None
        except aiohttp.ClientError as error:
            raise HookFailed(f"unreachable ({type(error).__name__})") from None
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise HookFailed("its answer is not JSON") from None
        return _answer(document)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
