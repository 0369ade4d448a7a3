"""Who sent a request: the TCP peer, or, when the peer is a reverse proxy on
`--trusted-proxies`, the client that proxy names in X-Forwarded-For. The guessing bound, the
refusal log and the audit log all ask here (specs/http.md, "Security": the client's address;
specs/decisions.md, 87)."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ...core.log_names import printable
from ...exposure import Network, trusted_networks

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("codex_mcp.http")

#: Hops of X-Forwarded-For read, from the right: more proxies than any deployment chains.
#: Past them the client is the last one read (the work per request stays bounded).
MOST_HOPS: Final = 16
#: The longest hop taken for an address ("[IPv6]:port"); a longer one is not one.
_LONGEST_HOP: Final = 64
#: Peers whose ignored X-Forwarded-For is said (each once): a client forging the header
#: straight to us cannot hide the proxy's line, nor write more than these.
_PEERS_SAID: Final = 8

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class ClientAddresses:
    """The client address of a request. X-Forwarded-For is read only from a trusted peer, and
    from the right: each proxy appends the address it was reached from, so the rightmost hop
    that is not a trusted proxy is the first address nobody on the list vouches for, and
    everything to its left was written by that client (no `Forwarded`, no X-Real-IP: a proxy
    that sets one header passes a client's other header untouched)."""

    __slots__ = ("_networks", "_said")

    def __init__(self, trusted: Sequence[str]) -> None:
        self._networks: tuple[Network, ...] = trusted_networks(trusted)
        self._said: set[str | None] = set()

    def __call__(self, request: web.Request) -> str | None:
        forwarded = request.headers.getall("X-Forwarded-For", ())
        return self.of(request.remote, forwarded) if forwarded else request.remote

    def of(self, peer: str | None, forwarded: Sequence[str]) -> str | None:
        """The client address of a request from `peer` with these X-Forwarded-For values."""
        address = _address(peer) if self._networks else None
        if address is None or not self._trusts(address):
            self._say_untrusted(peer)
            return peer
        hops = ",".join(forwarded).rsplit(",", MOST_HOPS)[-MOST_HOPS:]
        for hop in reversed(hops):
            named = _address(_bare(hop))
            if named is None:  # "unknown", garbage: the client is whoever wrote it
                break
            address = named
            if not self._trusts(named):
                break
        return str(address)

    def _trusts(self, address: Address) -> bool:
        return any(address in network for network in self._networks)

    def _say_untrusted(self, peer: str | None) -> None:
        """Once per peer: it sends X-Forwarded-For that is not believed (a proxy left off the
        list makes its clients one address: one guesser locks them all out)."""
        said = self._said
        if peer in said or len(said) >= _PEERS_SAID:
            return
        said.add(peer)
        log.warning(
            "X-Forwarded-For from %(peer)s is ignored: %(peer)s is not on --trusted-proxies, "
            "so every client it forwards counts as %(peer)s (one guessing bound, one name in "
            "the logs); if it is your reverse proxy, start with --trusted-proxies %(peer)s",
            {"peer": printable(peer)},
        )


def _bare(hop: str) -> str:
    """A hop without its port ("192.0.2.1:80", "[2001:db8::1]:443") or IPv6 zone: the address
    that names the client, however the proxy wrote it; "" when it is not one."""
    hop = hop.strip()
    if len(hop) > _LONGEST_HOP:
        return ""
    if hop.startswith("["):
        address, bracket, port = hop[1:].partition("]")
        if not bracket or (port and not (port[0] == ":" and port[1:].isdigit())):
            return ""
        hop = address
    elif hop.count(":") == 1:
        hop, _, port = hop.partition(":")
        if not port.isdigit():
            return ""
    return hop.partition("%")[0]


def _address(text: str | None) -> Address | None:
    """`text` as an address (IPv4 mapped into IPv6 as IPv4), or None."""
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


__all__ = ["MOST_HOPS", "ClientAddresses"]
