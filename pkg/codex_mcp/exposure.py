"""What an HTTP configuration would expose, checked before it serves, by `codex-mcp-http`
and every HttpConfig alike: each refusal a StartupError saying what to do
(specs/isolation.md, "Start-up configuration"). Nothing here imports the HTTP stack."""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .launch import StartupError
from .loopback import is_loopback_host
from .settings import HttpOptions, flag

if TYPE_CHECKING:
    from yarl import URL

#: What is said for every credential-free refusal: the ways to configure one.
CREDENTIALS: Final = "--bearer-token (or --bearer-token-file) or --oauth-issuer"


def refuse_unsafe(config: HttpOptions, bearer_tokens: Sequence[str]) -> None:
    """Raise StartupError for the first setting that would open the server or be ignored."""
    authenticated = bool(bearer_tokens) or bool(config.oauth_issuer)
    if not config.oauth_issuer:
        for field in dataclasses.fields(HttpOptions):
            value = getattr(config, field.name)
            # Set by the operator: a value of its own, not the field's default.
            if field.name.startswith("oauth_") and value and value != field.default:
                raise StartupError(
                    f"{flag(field.name)} has no effect without --oauth-issuer (the "
                    "authorization server whose tokens to accept): add --oauth-issuer URL, "
                    f"or drop {flag(field.name)}"
                )
    else:
        check_oauth(config)
    if not authenticated:
        for name in ("public_readyz", "public_metrics"):
            if getattr(config, name):
                raise StartupError(
                    f"{flag(name)} has no effect: no credential is required anywhere; "
                    f"configure one with {CREDENTIALS}, or drop {flag(name)}"
                )
        if not is_loopback_host(config.host) and not config.allow_unauthenticated_network:
            raise StartupError(
                f"--host {config.host} would serve every tool to the network with no "
                f"credential: require one with {CREDENTIALS}, listen on 127.0.0.1 behind a "
                "proxy, or say --allow-unauthenticated-network if something in front "
                "already admits only the right callers"
            )
    for origin in config.cors_origin:
        refuse_cors_origin(origin.strip())
    trusted_networks(config.trusted_proxies)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(entries: Sequence[str]) -> tuple[Network, ...]:
    """`--trusted-proxies`: addresses or networks, none of them every address (each client
    could then name any address it likes as its own)."""
    networks = []
    for entry in (each.strip() for each in entries):
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            if entry != "*":
                raise StartupError(
                    f"--trusted-proxies {entry!r} is not an address or network; write e.g. "
                    "--trusted-proxies 127.0.0.1,::1,10.0.0.0/24"
                ) from None
            network = None
        if network is None or network.prefixlen == 0:
            raise StartupError(
                f"--trusted-proxies {entry!r} trusts every address, so any client could name "
                "its own in X-Forwarded-For; list your proxies, e.g. --trusted-proxies "
                "127.0.0.1,10.0.0.0/24"
            )
        networks.append(network)
    return tuple(networks)


def check_oauth(config: HttpOptions) -> None:
    """The OAuth resource-server settings, given an issuer (specs/oauth.md, "Settings")."""
    checked_url(config.oauth_issuer or "", "--oauth-issuer")
    if config.oauth_resource:
        checked_url(config.oauth_resource, "--oauth-resource")
    elif not is_loopback_host(config.host):
        raise StartupError(
            "--oauth-issuer needs --oauth-resource: this server's public URL as its "
            "tokens name it, e.g. https://mcp.example.com/mcp"
        )
    parse_tool_scopes(list(config.oauth_tool_scope))


def checked_url(value: str, flag_name: str) -> URL:
    """`value` as an http(s) URL, https unless on loopback."""
    url = _http_url(value)
    if url is None:
        raise StartupError(f"{flag_name} {value!r} is not an http(s) URL")
    if url.scheme == "http" and not is_loopback_host(url.host or ""):
        raise StartupError(f"{flag_name} {value!r}: use https (plain http only on loopback)")
    return url


def _http_url(value: str) -> URL | None:
    """`value` as a URL with a host and the http(s) scheme; None when it is not one."""
    from yarl import URL

    try:
        url = URL(value)
        return url if url.host is not None and url.scheme in ("http", "https") else None
    except ValueError:
        return None


def parse_tool_scopes(entries: list[str]) -> list[tuple[str, frozenset[str]]]:
    """`--oauth-tool-scope` entries, TOOL=SCOPE [SCOPE...], as (pattern, scopes)."""
    rules = []
    for entry in entries:
        tool, equals, scopes = entry.partition("=")
        if not equals or not tool.strip() or not scopes.split():
            raise StartupError(
                f"--oauth-tool-scope {entry!r}: write TOOL=SCOPE [SCOPE...], "
                "e.g. run_query=db.read or 'github__*=repo read:org'"
            )
        rules.append((tool.strip(), frozenset(scopes.split())))
    return rules


def refuse_cors_origin(origin: str) -> None:
    """A `--cors-origin` entry must be one web origin, scheme://host[:port]."""
    if origin.lower() == "null":
        raise StartupError(
            "--cors-origin null would let every sandboxed iframe and file: page call this "
            "server (they all send Origin: null); list your web app's own origins, e.g. "
            "https://app.example.com"
        )
    if origin == "*":
        raise StartupError(
            "--cors-origin * is not supported: it would let a page from every origin call "
            "this server; list each origin that may, e.g. https://app.example.com"
        )
    url = _http_url(origin)
    if (
        url is None
        or url.raw_path not in ("", "/")
        or url.raw_query_string
        or url.raw_fragment
        or url.raw_user is not None
    ):
        raise StartupError(
            f"--cors-origin {origin!r} is not an origin: write scheme://host[:port], e.g. "
            "https://app.example.com"
        )
