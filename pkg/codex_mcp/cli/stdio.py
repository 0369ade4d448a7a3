"""`codex-mcp`: the stdio server Codex launches as a subprocess."""

from __future__ import annotations

import sys

from ..settings import Settings, load_settings
from .common import configure_logging, load_core


def main(argv: list[str] | None = None) -> None:
    settings = load_settings(Settings, argv if argv is not None else sys.argv[1:], "codex-mcp")
    configure_logging(settings.log_level)
    core = load_core(settings.serve)
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
