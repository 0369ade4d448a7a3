"""`codex-mcp`: the stdio server Codex launches as a subprocess."""

from __future__ import annotations

import sys

from ..defaults import DEFAULTS, StdioDefaults, configured_by_environment, quick_flags
from .common import configure_core, configure_logging, load_core, log_file_for
from .gateway import GATEWAY_HELP, STDIO_ONLY_HELP, gateway_core, intercept

DESCRIPTION = (
    "Serve MCP over stdin and stdout, for Codex and other clients that launch their "
    "servers. Messages are newline-delimited JSON or Content-Length framed (detected); "
    "logs go to stderr."
)


def _settings(argv: list[str]) -> StdioDefaults:
    """The defaults, or `--serve`/`--log-level` read directly, when nothing else is
    configured (a faster start: no pydantic-settings); otherwise the full parse."""
    if not configured_by_environment():
        quick = quick_flags(argv) if argv else DEFAULTS
        if quick is not None:
            return quick
    from .options import parse

    return parse(StdioDefaults, argv, "codex-mcp", DESCRIPTION, f"{GATEWAY_HELP} {STDIO_ONLY_HELP}")


def main(argv: list[str] | None = None) -> None:
    args, gateway = intercept(sys.argv[1:] if argv is None else argv, "codex-mcp")
    settings = _settings(args)
    configure_logging(settings.log_level, log_file_for(settings))
    core = gateway_core(gateway) if gateway is not None else load_core(settings.serve, settings)
    configure_core(core, settings)
    from ..runtime import run
    from ..transports.stdio import serve_stdio

    run(
        serve_stdio(
            core,
            max_message_bytes=settings.max_message_bytes,
            shutdown_timeout=settings.shutdown_timeout,
        ),
        use_uvloop=settings.uvloop,
    )


if __name__ == "__main__":
    main()
