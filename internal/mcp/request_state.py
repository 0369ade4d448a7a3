"""The signed `requestState` of 2026-07-28 input-required rounds: format, keys and errors in
specs/mcp-2026-07-28.md, Appendix B; specs/isolation.md, "Signing keys"."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from .errors import McpError
from .jsonrpc import INVALID_PARAMS

FORMAT_VERSION: Final = 1
DEFAULT_TTL_SECONDS: Final = 600.0  # a human may be answering an elicitation
MIN_KEY_BYTES: Final = 32
DEFAULT_MAX_STATE_CHARS: Final = 1 << 20
DEFAULT_REPLAY_CACHE_SIZE: Final = 100_000
# Domain separation: a MAC made for anything else with the same key never verifies here.
_MAC_CONTEXT: Final = b"mcp-request-state\x00"
# The request parameters a state is bound to, beyond the method itself.
_BINDING_NAME: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class RequestStateError(McpError):
    """A `requestState` the server will not accept; answered as -32602 Invalid params.

    `reason` (also in the error's `data`) tells the cases apart: "tampered", "expired",
    "wrong_request" or "replayed".
    """

    reason: str = "invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(
            INVALID_PARAMS,
            f"Invalid requestState: {detail}",
            {"reason": self.reason},
        )


class TamperedRequestState(RequestStateError):
    reason = "tampered"


class ExpiredRequestState(RequestStateError):
    reason = "expired"


class WrongRequestState(RequestStateError):
    reason = "wrong_request"


class ReplayedRequestState(RequestStateError):
    reason = "replayed"


@dataclass(frozen=True, slots=True)
class RequestState:
    """What a verified state says: where the request stood when the server asked."""

    method: str
    name: str | None
    round: int
    pending: tuple[str, ...]
    data: Any
    nonce: str
    expires_at: float

    def missing(self, input_responses: Mapping[str, Any] | None) -> tuple[str, ...]:
        """The pending input-request keys the retry did not answer."""
        if not input_responses:
            return self.pending
        return tuple(key for key in self.pending if key not in input_responses)


class ReplayCache:
    """Nonces of states already accepted, each kept until its state expires.

    Bounded: past `max_entries` the oldest entry is dropped even if unexpired (every
    state of one codec has the same lifetime, so insertion order is expiry order).
    Process-local: behind several replicas a state could be replayed once against each
    other replica, so replicas sharing a store claim each nonce there as well
    (`ServerCore.shared_nonces`, set with `--redis-url`).
    """

    def __init__(self, max_entries: int = DEFAULT_REPLAY_CACHE_SIZE) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._expiries: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._expiries)

    def add(self, nonce: str, expires_at: float, now: float) -> bool:
        """Record `nonce`; False when it was already recorded (a replay)."""
        expiries = self._expiries
        while expiries:
            oldest, expiry = next(iter(expiries.items()))
            if expiry > now and len(expiries) < self.max_entries:
                break
            del expiries[oldest]
        if nonce in expiries:
            return False
        expiries[nonce] = expires_at
        return True


def generate_key() -> bytes:
    """A fresh random signing key (256 bits)."""
    return secrets.token_bytes(MIN_KEY_BYTES)


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(value: Any) -> str:
    """A short stable digest of a JSON value (sorted keys, so dict order does not matter)."""
    encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return _b64encode(hashlib.sha256(encoded).digest()[:16])


def _binding(method: str, params: Mapping[str, Any]) -> tuple[str | None, str]:
    """The request's name (tool, prompt or URI) and a digest of its arguments."""
    field = _BINDING_NAME.get(method)
    name = params.get(field) if field is not None else None
    return (name if isinstance(name, str) else None), _digest(params.get("arguments"))


def _principal_digest(principal: str | None) -> str | None:
    return None if principal is None else _digest(principal)


class RequestStateCodec:
    """Issues and verifies `requestState` strings with a list of keys.

    The first key signs; every key verifies, so a key can be rotated in ahead of its
    use and rotated out after the states it signed have expired.
    """

    def __init__(
        self,
        keys: Sequence[bytes | str],
        *,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        replay_cache: ReplayCache | None = None,
        max_state_chars: int = DEFAULT_MAX_STATE_CHARS,
    ) -> None:
        if isinstance(keys, str | bytes):
            raise TypeError("keys must be a sequence of keys, not a single key")
        encoded = [key.encode() if isinstance(key, str) else bytes(key) for key in keys]
        if not encoded:
            raise ValueError("at least one requestState key is required")
        if any(len(key) < MIN_KEY_BYTES for key in encoded):
            raise ValueError(f"requestState keys must be at least {MIN_KEY_BYTES} bytes")
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        # One HMAC object per key, keyed once; copies of it sign and verify.
        self._macs = [hmac.new(key, _MAC_CONTEXT, hashlib.sha256) for key in encoded]
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self.replay_cache = replay_cache if replay_cache is not None else ReplayCache()
        self._max_state_chars = max_state_chars

    def _mac(self, index: int, payload: bytes) -> bytes:
        mac = self._macs[index].copy()
        mac.update(payload)
        return mac.digest()

    def issue(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        round: int,
        pending: Iterable[str],
        data: Any = None,
        principal: str | None = None,
    ) -> str:
        """A state for the input-required answer to this request (its `params`).

        `round` counts the server's input-required answers to this request, from 1;
        `pending` are the `inputRequests` keys the retry must answer; `data` is any JSON
        value the server wants back on the retry; `principal` names the authenticated
        caller, if any, so another caller cannot present the state.
        """
        name, arguments = _binding(method, params)
        payload = {
            "v": FORMAT_VERSION,
            "m": method,
            "n": name,
            "a": arguments,
            "c": _principal_digest(principal),
            "r": round,
            "p": list(pending),
            "d": data,
            "i": _b64encode(secrets.token_bytes(12)),
            # Whole seconds, rounded up: a state never expires earlier than asked.
            "e": math.ceil(self._clock() + self.ttl_seconds),
        }
        body = _b64encode(orjson.dumps(payload)).encode("ascii")
        return f"{body.decode('ascii')}.{_b64encode(self._mac(0, body))}"

    def verify(
        self,
        state: object,
        method: str,
        params: Mapping[str, Any],
        *,
        principal: str | None = None,
        consume: bool = True,
    ) -> RequestState:
        """The state the retry `params` of `method` echoed, once checked.

        Checks, in order: the signature (TamperedRequestState, also for anything that is
        not a state of ours), the expiry (ExpiredRequestState), the binding to this
        request and caller (WrongRequestState), and, when `consume`, that it was not
        accepted before (ReplayedRequestState).
        """
        payload = self._authentic_payload(state)
        now = self._clock()
        expires_at = payload["e"]
        if now >= expires_at:
            raise ExpiredRequestState("it has expired; start the request again")
        name, arguments = _binding(method, params)
        if (
            payload["m"] != method
            or payload["n"] != name
            or payload["a"] != arguments
            or payload["c"] != _principal_digest(principal)
        ):
            raise WrongRequestState(
                f"it was issued for another request ({payload['m']} {payload['n']!r})"
                if payload["m"] != method or payload["n"] != name
                else "it was issued for another request (different arguments or caller)"
            )
        nonce = payload["i"]
        if consume and not self.replay_cache.add(nonce, expires_at, now):
            raise ReplayedRequestState("it was already used; start the request again")
        return RequestState(
            method=method,
            name=name,
            round=payload["r"],
            pending=tuple(payload["p"]),
            data=payload["d"],
            nonce=nonce,
            expires_at=expires_at,
        )

    def _authentic_payload(self, state: object) -> dict[str, Any]:
        if not isinstance(state, str) or len(state) > self._max_state_chars:
            raise TamperedRequestState("it is not a state this server issued")
        body, dot, signature = state.partition(".")
        try:
            mac = _b64decode(signature)
            raw_body = body.encode("ascii")
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise TamperedRequestState("it is not a state this server issued") from None
        # The decoder skips stray characters; only the one encoding we produce is accepted,
        # so an altered state never verifies.
        if _b64encode(mac) != signature:
            raise TamperedRequestState("its signature does not match")
        if not dot or not any(
            hmac.compare_digest(self._mac(index, raw_body), mac) for index in range(len(self._macs))
        ):
            raise TamperedRequestState("its signature does not match")
        try:
            payload = orjson.loads(_b64decode(body))
        except (binascii.Error, ValueError):
            payload = None
        # Only a key holder can produce a valid signature, so a bad shape here means a
        # state from an incompatible version of this format, not an attack.
        if not isinstance(payload, dict) or payload.get("v") != FORMAT_VERSION:
            raise TamperedRequestState("it was issued in a format this server does not read")
        return payload
