"""`codex-mcp-http --workers N`: N processes on one port, sharing sessions through Redis.

The parent binds the port first (so `--port 0` picks one port for all), then starts N
copies of the server, each listening on that port with SO_REUSEPORT: the kernel spreads
connections across them, so one session's requests reach different workers, which is
why more than one worker needs `--redis-url`. The parent supervises: a worker that dies
is started again (a crash loop stops everything), and SIGTERM or SIGINT is passed to
every worker, which shuts down gracefully; one still running after the shutdown
timeout is killed.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Final

from ..core.request_state import generate_key
from ..defaults import WORKER_ENV, WORKER_LINK_ENV
from ..observe.workers import SharedMetrics

log = logging.getLogger("codex_mcp.workers")

#: More restarts than this within RESTART_WINDOW seconds is a crash loop: give up.
MAX_RESTARTS: Final = 5
RESTART_WINDOW: Final = 30.0


def refuse_without_redis(workers: int, redis_url: str | None) -> None:
    if workers > 1 and not redis_url:
        raise SystemExit(
            f"codex-mcp-http: --workers {workers} needs --redis-url (or CODEX_MCP_REDIS_URL): "
            "a session's requests reach any worker, so the workers must share sessions "
            "through Redis. Without Redis, run one worker per port behind a proxy that "
            "routes by Mcp-Session-Id (deploy/nginx/codex-mcp.conf)."
        )


def reserve_port(host: str, port: int) -> socket.socket:
    """A bound (not listening) SO_REUSEPORT socket holding the port for the workers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


#: Said once by a supervisor whose workers sign with its own key (specs/isolation.md).
KEY_OF_THIS_SUPERVISOR: Final = (
    "codex-mcp-http: requestState keys: none configured, so these workers sign with a key "
    "of this supervisor, and input-required rounds fail as 'tampered' on any other replica "
    "on this Redis and after a restart; set CODEX_MCP_REQUEST_STATE_KEYS (or "
    "--request-state-keys-file) to the same keys on every replica"
)


class Supervisor:
    def __init__(
        self,
        argv: Sequence[str],
        workers: int,
        host: str,
        port: int,
        grace: float,
        *,
        keys_configured: bool = False,
    ):
        self.argv = list(argv)
        self.count = workers
        self.host = host
        self.port = port
        self.grace = grace
        self.keys_configured = keys_configured
        # The workers' shared requestState key when none is configured: in memory here,
        # passed down each worker's link (never through the shared store).
        self.key = generate_key().hex()
        self.children: dict[int, subprocess.Popen[bytes]] = {}
        #: The write end of each worker's link: the worker exits when it closes.
        self.links: dict[int, int] = {}
        self.stopping = False
        self.restarts: list[float] = []
        #: Where the workers' metrics meet, so one scrape shows them all.
        self.metrics = SharedMetrics()

    def _spawn(self, index: int) -> None:
        command = [
            sys.executable,
            "-m",
            "codex_mcp.cli.http",
            *self.argv,
            "--port",
            str(self.port),
            "--workers",
            "1",
        ]
        read_end, write_end = os.pipe()
        os.write(write_end, f"{self.key}\n".encode("ascii"))  # fits the pipe's buffer
        env = {
            **os.environ,
            **self.metrics.env(),
            WORKER_ENV: str(index),
            WORKER_LINK_ENV: str(read_end),
        }
        try:
            self.children[index] = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, pass_fds=(read_end,)
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        previous = self.links.pop(index, None)
        if previous is not None:
            os.close(previous)
        self.links[index] = write_end

    def _stop_all(self, signum: int = signal.SIGTERM) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signum)

    def run(self) -> int:
        holder = reserve_port(self.host, self.port)
        self.port = holder.getsockname()[1]
        print(
            f"codex-mcp-http: {self.count} workers on port {self.port} (pid {os.getpid()})",
            file=sys.stderr,
            flush=True,
        )
        if not self.keys_configured:
            print(KEY_OF_THIS_SUPERVISOR, file=sys.stderr, flush=True)

        def on_signal(signum: int, _: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        for index in range(self.count):
            self._spawn(index)
        status = 0
        try:
            while not self.stopping:
                time.sleep(0.1)
                for index, child in list(self.children.items()):
                    code = child.poll()
                    if code is None or self.stopping:
                        continue
                    if not self._may_restart():
                        print(
                            f"codex-mcp-http: worker {index} keeps exiting (last: {code}); "
                            "stopping",
                            file=sys.stderr,
                            flush=True,
                        )
                        self.stopping, status = True, 1
                        break
                    print(
                        f"codex-mcp-http: worker {index} (pid {child.pid}) exited with {code}; "
                        "starting it again",
                        file=sys.stderr,
                        flush=True,
                    )
                    self.metrics.exited(child.pid)
                    self._spawn(index)
        finally:
            self._stop_all()
            deadline = time.monotonic() + self.grace + 5
            for child in self.children.values():
                try:
                    child.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
            for link in self.links.values():
                os.close(link)
            holder.close()
            self.metrics.close()
        return status

    def _may_restart(self) -> bool:
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW]
        self.restarts.append(now)
        return len(self.restarts) <= MAX_RESTARTS


__all__ = ["WORKER_ENV", "Supervisor", "refuse_without_redis", "reserve_port"]
