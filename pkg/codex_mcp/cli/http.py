"""`codex-mcp-http`: the same server over HTTP, for a reverse proxy or Codex's `url =` servers."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..launch import collector_paused
from ..worker_process import config_error, in_worker

if TYPE_CHECKING:
    from ..settings import HttpDefaults

DESCRIPTION = (
    "Serve MCP over Streamable HTTP at /mcp (with single-event SSE at /mcp/sse and the "
    "2024-11-05 HTTP+SSE transport at /sse for older clients), plus /healthz and /readyz."
)

__all__ = ["bearer_tokens", "main"]


def bearer_tokens(settings: HttpDefaults) -> list[str]:
    """The tokens configured; an empty one given would leave the server open, so it stops
    the start instead."""
    if settings.bearer_token is not None and not settings.bearer_token.strip():
        raise SystemExit("codex-mcp-http: --bearer-token is empty; give a token, or drop it")
    tokens = [settings.bearer_token.strip()] if settings.bearer_token else []
    if settings.bearer_token_file is not None:
        path = settings.bearer_token_file
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SystemExit(f"codex-mcp-http: cannot read --bearer-token-file: {exc}") from None
        listed = [line.strip() for line in lines if line.strip()]
        if not listed:
            raise SystemExit(
                f"codex-mcp-http: --bearer-token-file {path} lists no token; "
                "write one per line, or drop the flag"
            )
        tokens.extend(listed)
    return tokens


def main(argv: list[str] | None = None) -> None:
    try:
        with collector_paused():
            serve = _prepare(sys.argv[1:] if argv is None else argv)
    except SystemExit as stop:
        if in_worker() and isinstance(stop.code, str):
            # A start-up mistake only a worker finds (the module to --serve): its
            # supervisor stops, rather than restart it to say the same again.
            config_error(stop.code)
        raise
    serve()


def _prepare(given: list[str]) -> Callable[[], object]:
    """Everything before serving (settings, imports, the core, the config): what then serves."""
    from ..settings import HttpDefaults
    from .gateway import GATEWAY_HELP, HTTP_USAGE, gateway_core, intercept
    from .options import parse

    args, gateway = intercept(given, "codex-mcp-http")
    settings = parse(HttpDefaults, args, "codex-mcp-http", DESCRIPTION, GATEWAY_HELP, HTTP_USAGE)
    # Checked before anything starts (workers, a gateway's children): a refused
    # configuration is one line and nothing else.
    options, tokens = _checked_options(settings)
    policy = None
    if settings.policy is not None:  # checked before anything starts; unset, not imported
        from ..policy.install import checked_policy

        policy = checked_policy(settings, "codex-mcp-http")
    if settings.workers > 1:
        from ..scale import require_redis_client
        from ..scale.workers import Supervisor, refuse_without_redis
        from .common import request_state_keys

        refuse_without_redis(settings.workers, settings.redis_url)
        require_redis_client()
        supervisor = Supervisor(
            given,
            settings.workers,
            settings.host,
            settings.port,
            settings.shutdown_timeout,
            keys_configured=bool(request_state_keys(settings)),
        )
        return lambda: sys.exit(supervisor.run())
    if gateway is not None:
        # Before the imports below (aiohttp, the core, the client): its children start
        # meanwhile, on another core (gateway/config/early.py).
        from ..gateway.config.early import start_children

        start_children(gateway)
    from .common import configure_core, configure_logging, load_core, log_file_for

    configure_logging(settings.log_level, log_file_for(settings))
    link = None
    if in_worker():
        from ..scale.worker_link import join_supervisor

        link = join_supervisor(settings.shutdown_timeout)
    core = gateway_core(gateway) if gateway is not None else load_core(settings.serve, settings)
    configure_core(core, settings, link.key if link is not None else None)
    if policy is not None:
        policy.install(core)
    from ..launch import run
    from ..transports.http import HttpConfig, serve_http
    from ..transports.http.app import announcer

    config = HttpConfig(
        **options,  # type: ignore[arg-type]
        bearer_tokens=tokens,
        # A worker of `--workers N` shares its parent's port with its siblings.
        reuse_port=in_worker(),
        workers_status=link.status if link is not None else None,
        operator_cookie_secret=link.key.encode() if link is not None and link.key else None,
    )
    announce = announcer("codex-mcp-http")

    def listening(url: str) -> None:
        announce(url)
        if link is not None:
            link.listening()

    return lambda: run(
        serve_http(core, config, on_listening=listening),
        use_uvloop=settings.uvloop,
        prog="codex-mcp-http",
    )


def _checked_options(settings: HttpDefaults) -> tuple[dict[str, object], list[str]]:
    """The transport's options and the bearer tokens, refused (one line) if they would
    leave the server open or ignore a setting (exposure.py)."""
    from ..exposure import refuse_unsafe
    from ..launch import StartupError
    from ..settings import HttpOptions

    options = {
        field.name: getattr(settings, field.name) for field in dataclasses.fields(HttpOptions)
    }
    if options["post_stream"] == "auto":
        # The Rust codex-mcp-server's streaming for Codex: GET SSE plus JSON POST, unless asked.
        options["post_stream"] = "header" if settings.serve == "codex" else "upgrade"
    if options["on_hangup"] == "auto":
        # A Codex client that hangs up stops its turn, as in the Rust codex-mcp-server.
        options["on_hangup"] = "cancel" if settings.serve == "codex" else "keep"
    tokens = bearer_tokens(settings)
    try:
        refuse_unsafe(settings, tokens)
    except StartupError as error:
        raise SystemExit(f"codex-mcp-http: {error}") from None
    return options, tokens


if __name__ == "__main__":
    main()
