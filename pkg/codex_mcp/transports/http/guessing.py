"""How many wrong credentials a client may send: per address, taken before the credential is
compared (specs/http.md, "Security": guessing; decision 76)."""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from typing import Final

from aiohttp import web

from .errors import TRANSPORT_ERROR, error_response, refusal

#: Seconds an address's failures count for, from its first.
WINDOW_SECONDS: Final = 60.0
#: Client addresses kept (the one whose window began first is forgotten first).
TRACKED_ADDRESSES: Final = 4096
#: Once this many times the per-address bound have failed in a window from all addresses
#: together, an address that has failed once has no more attempts until its window ends.
IN_ALL_FACTOR: Final = 10


def client_of(address: str | None) -> str:
    """The client an address stands for: an IPv4 address, or an IPv6 /64 (a host is given a
    /64 and may take any address in it); IPv4 mapped into IPv6 is that IPv4 address."""
    if not address or ":" not in address:
        return address or ""
    try:
        ip = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


class _Tally:
    __slots__ = ("failures", "pending", "since")

    def __init__(self, now: float) -> None:
        self.since = now  # the window's start: its first failure
        self.failures = 0
        self.pending = 0  # attempts taken whose credential is being compared


class Attempt:
    """One credential's attempt. `wait` > 0: the address has none left (answer 429 with it
    and compare nothing); else say how it went with `failed` or `passed`, or let the `with`
    block end it: an attempt that ends with no verdict (cancelled, no body) is no failure."""

    __slots__ = ("_key", "_limit", "_open", "_tally", "wait")

    def __init__(self, limit: GuessingLimit, key: str, tally: _Tally, wait: int) -> None:
        self._limit, self._key, self._tally, self.wait = limit, key, tally, wait
        self._open = not wait

    def failed(self) -> None:
        if self._open:
            self._open = False
            self._limit._settle(self._key, self._tally, failed=True)

    def passed(self) -> None:
        if self._open:
            self._open = False
            self._limit._settle(self._key, self._tally, failed=False)

    def __enter__(self) -> Attempt:
        return self

    def __exit__(self, *_: object) -> None:
        self.passed()

    def refused(self) -> web.Response:
        return locked_out(self.wait)


def locked_out(wait: int) -> web.Response:
    """The answer to an address with no attempt left: no verdict, and when to come back."""
    message = f"Too many failed credentials from this address: try again in {wait} s"
    headers = {"Retry-After": str(wait)}
    return refusal(error_response(429, message, TRANSPORT_ERROR, headers=headers), "guessing")


class GuessingLimit:
    """Failed credentials per client address and window. An attempt is taken before the
    credential is compared and counts while it is compared, so requests sent together get
    no more verdicts than requests sent one by one; a right credential takes nothing away."""

    def __init__(self, per_address: int) -> None:
        self.per_address = per_address
        self.in_all = per_address * IN_ALL_FACTOR
        self._tallies: OrderedDict[str, _Tally] = OrderedDict()
        self._all_since = 0.0
        self._all_failures = 0

    def __len__(self) -> int:
        return len(self._tallies)

    @property
    def quiet(self) -> bool:
        """No address failed lately (or none since the last attempt forgot them): nobody is
        locked, so a right credential needs no attempt."""
        return not self._tallies

    def wait(self, address: str | None) -> int:
        """`Attempt.wait` without taking an attempt: for a credential compared at once
        after it, with nothing in between (a static token), or to be taken after it."""
        now = time.monotonic()
        self._forget(now)
        tally = self._tallies.get(client_of(address))
        if tally is None or (tally.failures and now - tally.since >= WINDOW_SECONDS):
            return 0
        return self._wait(tally, now)

    def attempt(self, address: str | None) -> Attempt:
        now = time.monotonic()
        self._forget(now)
        tallies = self._tallies
        key = client_of(address)
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = _Tally(now)
            while len(tallies) > TRACKED_ADDRESSES:
                tallies.popitem(last=False)
        elif tally.failures and now - tally.since >= WINDOW_SECONDS:
            tally.failures = 0
        wait = self._wait(tally, now)
        if not wait:
            tally.pending += 1
        return Attempt(self, key, tally, wait)

    def _forget(self, now: float) -> None:
        """Drop the windows that ended, the oldest first."""
        tallies = self._tallies
        while tallies:
            oldest = next(iter(tallies.values()))
            if oldest.pending or now - oldest.since < WINDOW_SECONDS:
                return
            tallies.popitem(last=False)

    def _wait(self, tally: _Tally, now: float) -> int:
        """Whole seconds until the address has an attempt again; 0 if it has one now."""
        ends = tally.since + WINDOW_SECONDS
        if tally.failures + tally.pending >= self.per_address:
            return max(1, math.ceil(ends - now)) if tally.failures else 1
        attacked = now - self._all_since < WINDOW_SECONDS and self._all_failures >= self.in_all
        if attacked and tally.failures:
            return max(1, math.ceil(min(ends, self._all_since + WINDOW_SECONDS) - now))
        return 0

    def _settle(self, key: str, tally: _Tally, failed: bool) -> None:
        if self._tallies.get(key) is not tally:  # forgotten meanwhile (past TRACKED_ADDRESSES)
            return
        tally.pending -= 1
        if failed:
            now = time.monotonic()
            if not tally.failures:
                tally.since = now
                self._tallies.move_to_end(key)  # the order of the windows' starts
            tally.failures += 1
            if now - self._all_since >= WINDOW_SECONDS:
                self._all_since, self._all_failures = now, 0
            self._all_failures += 1
        elif not tally.failures and not tally.pending:
            del self._tallies[key]  # a right credential leaves nothing behind


__all__ = ["Attempt", "GuessingLimit", "client_of", "locked_out"]
