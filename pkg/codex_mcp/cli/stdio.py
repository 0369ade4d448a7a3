"""`codex-mcp`: the stdio server Codex launches as a subprocess."""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..launch import collector_paused

if TYPE_CHECKING:
    from ..core.server import ServerCore
    from ..settings import StdioDefaults

DESCRIPTION = (
    "Serve MCP over stdin and stdout, for Codex and other clients that launch their "
    "servers. Messages are newline-delimited JSON or Content-Length framed (detected); "
    "logs go to stderr."
)


def _settings(argv: list[str]) -> StdioDefaults:
    """The defaults when nothing is given or configured (no parsing at all: the usual
    start from a Codex config), else the full parse."""
    from ..settings import DEFAULTS, StdioDefaults, configured_by_environment
    from .gateway import GATEWAY_HELP, STDIO_USAGE

    if not argv and not configured_by_environment():
        return DEFAULTS
    from .options import parse

    return parse(StdioDefaults, argv, "codex-mcp", DESCRIPTION, GATEWAY_HELP, STDIO_USAGE)


def main(argv: list[str] | None = None) -> None:
    with collector_paused():
        serve = _prepare(sys.argv[1:] if argv is None else argv)
    serve()


def _prepare(given: list[str]) -> Callable[[], object]:
    """Everything before serving (settings, imports, the core): what then serves."""
    from .gateway import gateway_core, intercept

    args, gateway = intercept(given, "codex-mcp")
    settings = _settings(args)
    policy = None
    if settings.policy is not None:  # checked before anything starts; unset, not imported
        from ..policy.install import checked_policy

        policy = checked_policy(settings, "codex-mcp")
    if gateway is not None:
        # Before the imports below (the core, the client, the relay): its children start
        # meanwhile, on another core (gateway/config/early.py).
        from ..gateway.config.early import start_children

        start_children(gateway)
    from .common import configure_core, configure_logging, load_core, log_file_for

    configure_logging(settings.log_level, log_file_for(settings))
    core = (
        gateway_core(gateway, settings.max_message_bytes)
        if gateway is not None
        else load_core(settings.serve, settings)
    )
    configure_core(core, settings)
    if policy is not None:
        policy.install(core)
    from ..launch import run
    from ..transports.stdio import serve_stdio

    main: Coroutine[Any, Any, Any] = serve_stdio(
        core,
        max_message_bytes=settings.max_message_bytes,
        shutdown_timeout=settings.shutdown_timeout,
        send_buffer_bytes=settings.send_buffer_bytes,
    )
    from ..observe.tracing import requested as tracing_requested

    if settings.metrics_port is not None or settings.audit_log is not None or tracing_requested():
        main = _observed(main, core, settings)
    return lambda: run(main, use_uvloop=settings.uvloop, prog="codex-mcp")


def _observed(
    main: Coroutine[Any, Any, Any], core: ServerCore, settings: StdioDefaults
) -> Coroutine[Any, Any, Any]:
    """Metrics (--metrics-port), the audit log (--audit-log) and tracing (OTEL_EXPORTER_OTLP_*)
    for the stdio server; imported only when asked, so a plain start stays fast."""
    from ..observe.enable import observe

    observed = observe(
        core,
        metrics=settings.metrics_port is not None,
        audit_log=settings.audit_log,
        audit_arguments=settings.audit_arguments,
    )
    if settings.metrics_port is None or observed is None:
        return main
    from ..observe.metrics_server import serving_metrics

    return serving_metrics(main, observed, settings.metrics_port)


if __name__ == "__main__":
    main()
