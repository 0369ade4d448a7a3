"""Running a coroutine on the fastest event loop available."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from .startup import StartupError, config_error, in_worker


def run(main: Coroutine[Any, Any, Any], *, use_uvloop: bool = True, prog: str | None = None) -> Any:
    """Run `main`; a start-up mistake exits with its one line (status 1), no traceback,
    naming `prog` (default: the script's name)."""
    try:
        return _run(main, use_uvloop)
    except StartupError as error:
        message = f"{prog or Path(sys.argv[0]).name}: {error}"
        if in_worker():  # its supervisor stops, rather than restart it to say it again
            config_error(message)
        raise SystemExit(message) from None


def _run(main: Coroutine[Any, Any, Any], use_uvloop: bool) -> Any:
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)
