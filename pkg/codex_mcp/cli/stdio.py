"""`codex-mcp`: the stdio server Codex launches as a subprocess."""

from __future__ import annotations

import sys
from typing import Any

from ..defaults import DEFAULTS, configured_by_environment, quick_flags
from .common import configure_logging, load_core
from .gateway import gateway_core, intercept


def _settings(argv: list[str]) -> Any:
    """The settings model when anything is configured; without loading pydantic-settings
    (a faster start) when nothing is, or only the usual `--serve`/`--log-level` flags."""
    if not configured_by_environment():
        quick = quick_flags(argv) if argv else DEFAULTS
        if quick is not None:
            return quick
    from ..settings import Settings, load_settings

    return load_settings(Settings, argv, "codex-mcp")


def main(argv: list[str] | None = None) -> None:
    args, gateway = intercept(sys.argv[1:] if argv is None else argv, "codex-mcp")
    settings = _settings(args)
    configure_logging(settings.log_level)
    core = gateway_core(gateway) if gateway is not None else load_core(settings.serve)
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
