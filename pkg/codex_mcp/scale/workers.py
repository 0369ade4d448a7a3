"""`codex-mcp-http --workers N`: N processes on one port (SO_REUSEPORT), sharing sessions
through Redis, and the parent that supervises them (specs/scale.md, "--workers N")."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Final

import orjson

from ..core.request_state import generate_key
from ..observe.workers import SharedMetrics
from ..worker_process import CONFIG_ERROR_STATUS, WORKER_ENV, WORKER_LINK_ENV
from .worker_link import LISTENING

log = logging.getLogger("codex_mcp.workers")

#: The first restart of a worker waits this long; each quick death doubles it, up to
#: MAX_BACKOFF. A worker that ran RESTART_WINDOW seconds counts as healthy again.
FIRST_BACKOFF: Final = 0.25
MAX_BACKOFF: Final = 30.0
RESTART_WINDOW: Final = 30.0
#: While no worker serves, a client gets this long to send its request head before the
#: supervisor's 503 goes out anyway.
STANDBY_READ_TIMEOUT: Final = 0.2


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
        #: Our end of each worker's link: the worker exits when it closes, and says on it
        #: when it listens.
        self.links: dict[int, socket.socket] = {}
        #: The workers that said they listen (and live): the only ones said to serve.
        self.listening: set[int] = set()
        self.started: dict[int, float] = {}
        #: Per worker: quick deaths in a row, and when it may start again (if dead).
        self.failures: dict[int, int] = {}
        self.restart_at: dict[int, float] = {}
        self.reason = ""
        self.stopping = False
        #: Set when a worker exited with CONFIG_ERROR_STATUS: everything stops with it.
        self.config_error: int | None = None
        #: Where the workers' metrics meet, so one scrape shows them all.
        self.metrics = SharedMetrics()
        self.holder: socket.socket | None = None
        #: No worker serves: the supervisor listens on the port and answers 503 itself.
        self.standing_by = False

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
        ours, theirs = socket.socketpair()
        ours.sendall(f"{self.key}\n".encode("ascii"))  # fits the socket's buffer
        ours.setblocking(False)  # a stopped worker never blocks the supervisor
        env = {
            **os.environ,
            **self.metrics.env(),
            WORKER_ENV: str(index),
            WORKER_LINK_ENV: str(theirs.fileno()),
        }
        try:
            self.children[index] = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),)
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._close_link(index)
        self.links[index] = ours
        self.started[index] = time.monotonic()
        self.restart_at.pop(index, None)

    def _close_link(self, index: int) -> None:
        self.listening.discard(index)
        link = self.links.pop(index, None)
        if link is not None:
            link.close()

    def _say(self, line: str) -> None:
        print(f"codex-mcp-http: {line}", file=sys.stderr, flush=True)

    def run(self) -> int:
        self.holder = reserve_port(self.host, self.port)
        self.port = self.holder.getsockname()[1]
        self._say(f"{self.count} workers on port {self.port} (pid {os.getpid()})")
        if not self.keys_configured:
            print(KEY_OF_THIS_SUPERVISOR, file=sys.stderr, flush=True)

        def on_signal(signum: int, _: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        for index in range(self.count):
            self._spawn(index)
        try:
            while not self.stopping:
                self._supervise()
                if self.config_error is not None:
                    break
        finally:
            for child in self.children.values():
                child.terminate()  # SIGTERM, to a worker still running (Popen polls first)
            deadline = time.monotonic() + self.grace + 5
            for child in self.children.values():
                try:
                    child.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
            for index in list(self.links):
                self._close_link(index)
            self._end_standby()
            if self.holder is not None:
                self.holder.close()
            self.metrics.close()
        return 0 if self.config_error is None else CONFIG_ERROR_STATUS

    def _supervise(self) -> None:
        """One turn: note deaths, start what is due, tell the workers, wait a little."""
        now = time.monotonic()
        changed = self._hear_workers()
        for index, child in list(self.children.items()):
            code = child.poll()
            if code is None or index in self.restart_at:
                continue
            if code == CONFIG_ERROR_STATUS:
                # The worker said why (a bad --redis-url, refused credentials): every
                # worker would say the same, so stop rather than restart.
                self.config_error = code
                return
            changed = True
            self._close_link(index)
            self.metrics.exited(child.pid)
            lived = now - self.started.get(index, now)
            failures = 1 if lived >= RESTART_WINDOW else self.failures.get(index, 0) + 1
            self.failures[index] = failures
            delay = min(FIRST_BACKOFF * 2 ** (failures - 1), MAX_BACKOFF)
            self.restart_at[index] = now + delay
            self.reason = (
                f"worker {index} exited with {code} ({failures} time(s) in a row); "
                f"restarting it in {delay:g} s"
            )
            self._say(f"{self.reason}; {self._serving()} of {self.count} workers serving")
        for index, due in list(self.restart_at.items()):
            if due <= now and not self.stopping:
                self._spawn(index)
                changed = True
        if changed:
            self._tell_workers()
        if self._running() == 0:
            assert self.holder is not None
            if not self.standing_by:
                self._say(f"no worker is serving: {self.reason}")
                self.holder.listen(64)
                self.holder.setblocking(False)
                self.standing_by = True
            retry = min(self.restart_at.values(), default=now) - now
            _answer_waiting(self.holder, self.reason, retry, 0.1)
            return
        self._end_standby()
        time.sleep(0.1)

    def _running(self) -> int:
        return sum(1 for child in self.children.values() if child.poll() is None)

    def _serving(self) -> int:
        """Workers that said they listen, and live: a worker still starting (or hung before
        it listens) is running, not serving."""
        return sum(1 for i in self.listening if self.children[i].poll() is None)

    def _hear_workers(self) -> bool:
        """Note the workers that said they listen; True if one did."""
        heard = False
        for index, link in self.links.items():
            with contextlib.suppress(OSError):  # nothing said (BlockingIOError), or gone
                if LISTENING in link.recv(4096) and index not in self.listening:
                    self.listening.add(index)
                    heard = True
        return heard

    def _tell_workers(self) -> None:
        """Each worker's /readyz says how many serve, and why not all (a JSON line down
        its link)."""
        serving = self._serving()
        status: dict[str, object] = {"serving": serving, "of": self.count}
        if serving < self.count:
            status["reason"] = self.reason
        line = orjson.dumps(status) + b"\n"
        for link in self.links.values():
            with contextlib.suppress(OSError):  # a worker that just died, or a full buffer
                link.send(line)

    def _end_standby(self) -> None:
        """A worker is back: the port is theirs again (a fresh, unlistened reservation)."""
        if not self.standing_by:
            return
        self.standing_by = False
        assert self.holder is not None
        self.holder.close()
        self.holder = reserve_port(self.host, self.port)


def _answer_waiting(holder: socket.socket, reason: str, retry_after: float, wait: float) -> None:
    """503 and the reason to the connections waiting on the port now, or within `wait`
    seconds: a balancer's `/readyz` probe (or a client) learns why no worker answers,
    instead of getting its connection refused. Every request gets the same short answer."""
    ready, _, _ = select.select([holder], [], [], wait)
    if not ready:
        return
    body = orjson.dumps({"status": "no worker serving", "reason": reason})
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {max(1, round(retry_after))}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("ascii")
    while True:
        try:
            connection, _ = holder.accept()
        except OSError:  # BlockingIOError: nobody else is waiting
            return
        with contextlib.closing(connection):
            connection.settimeout(STANDBY_READ_TIMEOUT)
            with contextlib.suppress(OSError):
                connection.recv(65536)  # the request head, best effort
                connection.sendall(head + body)


__all__ = ["WORKER_ENV", "Supervisor", "refuse_without_redis", "reserve_port"]
