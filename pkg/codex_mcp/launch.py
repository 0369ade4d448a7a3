"""Launching a server process: its imports with the collector paused, `--version`, the
event loop (uvloop when there is one), and a start-up mistake (a StartupError, raised where
it is found) as one line saying what to do, a non-zero exit, no traceback."""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import socket
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, NoReturn

from .worker_process import config_error, in_worker


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """A console script's imports and set-up with the cyclic garbage collector paused: the
    few hundred modules a server imports make some 80 collections that free next to nothing
    (~10 ms of a start). What the set-up made is then frozen (`gc.freeze`: long-lived,
    never scanned again, so the collections while serving are smaller) and the collector
    runs again, before the server serves."""
    if not gc.isenabled():  # someone paused it on purpose: theirs to resume
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    from . import __version__

    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )


class OneLineErrors(argparse.ArgumentParser):
    """A bad flag is one line naming it and pointing at --help (not the usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class StartupError(Exception):
    """The server cannot start as asked; the message says what to change."""


def cannot_listen(host: str, port: int, error: OSError) -> StartupError:
    """Why binding `host:port` failed, and what to do about it."""
    where = f"{host}:{port}"
    if isinstance(error, socket.gaierror):
        return StartupError(
            f"cannot resolve --host {host!r} ({error.strerror}); "
            "give an address such as 127.0.0.1, ::1 or 0.0.0.0"
        )
    if error.errno == errno.EADDRINUSE:
        return StartupError(
            f"port {port} on {host} is already in use; stop what holds it or pick another "
            "--port (0 picks a free one)"
        )
    if error.errno in (errno.EACCES, errno.EPERM):
        return StartupError(f"not allowed to listen on {where}; use a --port above 1023")
    if error.errno == errno.EADDRNOTAVAIL:
        return StartupError(
            f"--host {host} is not an address of this machine; use 127.0.0.1, ::1 or 0.0.0.0"
        )
    return StartupError(f"cannot listen on {where}: {error.strerror or error}")


def run(main: Coroutine[Any, Any, Any], *, use_uvloop: bool = True, prog: str | None = None) -> Any:
    """Run `main` on uvloop when asked and installed, else asyncio; a start-up mistake
    exits with its one line (status 1), no traceback, naming `prog` (default: the
    script's name)."""
    try:
        if use_uvloop:
            try:
                import uvloop
            except ImportError:
                pass
            else:
                return uvloop.run(main)
        import asyncio

        return asyncio.run(main)
    except StartupError as error:
        message = f"{prog or Path(sys.argv[0]).name}: {error}"
        if in_worker():  # its supervisor stops, rather than restart it to say it again
            config_error(message)
        raise SystemExit(message) from None
