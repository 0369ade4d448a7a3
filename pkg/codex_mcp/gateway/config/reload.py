"""Hot reload: the gateway reads its `.mcp.json` again when the file changes or on SIGHUP
(specs/gateway.md, "Supervision"); the provider applies what changed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

from ..errors import one_line
from .json_file import ConfigError
from .load import SERVER_NAME_ENV, read_config, select_server
from .model import GatewayConfig

log = logging.getLogger("codex_mcp.gateway")

#: How often the file is looked at.
POLL_SECONDS = 1.0


def file_signature(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed file (or a new one, or a replaced one) from the one seen before."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def load_again(path: Path) -> GatewayConfig | None:
    """The file's config as `codex-mcp` would load it, or None (said why) when it is bad."""
    try:
        return select_server(read_config(path), os.environ.get(SERVER_NAME_ENV, "").strip())
    except ConfigError as error:
        log.warning("config not reloaded, the running servers are kept: %s", error)
        return None


class ConfigWatcher:
    """Calls `apply(config)` with the file's new config when it changes, or on SIGHUP."""

    def __init__(self, path: Path, apply: Callable[[GatewayConfig], None]) -> None:
        self.path = path
        self.apply = apply
        self._seen = file_signature(path)
        self._task: asyncio.Task[None] | None = None
        self._hangup = asyncio.Event()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGHUP, self._hangup.set)  # main thread only
        self._task = loop.create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)

    async def _watch(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._hangup.wait()
            # Signals that come while this reload runs set the event again: a burst of them
            # costs one more reload after this one, never one each.
            hangup = self._hangup.is_set()
            self._hangup.clear()
            seen = file_signature(self.path)
            if not hangup and seen == self._seen:
                continue
            self._seen = seen
            try:
                config = load_again(self.path)
                if config is not None:
                    self.apply(config)
            except Exception as error:  # one bad reload must not end the watching
                log.warning(
                    "config not reloaded, the running servers are kept: %s: %s",
                    type(error).__name__,
                    one_line(error),
                )
