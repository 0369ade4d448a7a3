"""Whether a host is this machine's loopback: the one test behind every "plain http only on
loopback" and "beyond loopback" rule (the server's start-up refusals, the OAuth client's
endpoints, the Host checks, the `--serve codex` defaults)."""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """Is `host` (an address, bracketed or not, or a name) this machine's loopback? A
    name other than localhost counts as the network: it may resolve anywhere."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
