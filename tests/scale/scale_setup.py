"""Replicas sharing sessions through Redis, for the scale tests: a real `redis-server` on a
free loopback port (no persistence, no background save), and the nginx configs in front of
the replicas (imported by name; the fixtures are in conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # http_process
from http_process import HttpProcess
from nginx_proxy import upstream
from support.polling import until_sync
from support.processes import free_port as free_port
from support.processes import wait_for_port

HERE = Path(__file__).resolve().parent
SHARED = str(HERE / "servers/shared.py")


def _installed(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )


REDIS = _installed("redis-server")
#: Each server the Redis-backed tests run on, where installed (Valkey: Debian's valkey-server).
SERVERS = {name: _installed(f"{name}-server") for name in ("redis", "valkey")}
#: Its command-line client (`--cluster create`), by server binary.
CLIS = {path: _installed(f"{name}-cli") for name, path in SERVERS.items() if path}


class RedisServer:
    """redis-server (or valkey-server) on a fixed loopback port, stoppable and restartable
    (empty: no persistence, as a restarted cache would be)."""

    def __init__(self, *args: str, port: int | None = None, binary: str | None = None) -> None:
        self.binary = binary or REDIS
        assert self.binary is not None
        self.args = args  # more redis-server options, e.g. ("--requirepass", "secret")
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        assert self.binary is not None
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                *self.args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, Path(self.binary).name)

    def cli(self, *args: str) -> str:
        """One command through the server's own client, answered as text."""
        cli = CLIS[self.binary]  # type: ignore[index]
        assert cli is not None
        auth: tuple[str, ...] = ()
        if "--requirepass" in self.args:
            auth = ("--no-auth-warning", "-a", self.args[self.args.index("--requirepass") + 1])
        done = subprocess.run(
            [cli, "-h", "127.0.0.1", "-p", str(self.port), *auth, *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def kill(self) -> None:
        """SIGKILL: gone at once, as a crashed Redis is (nothing saved: it comes back empty)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


Replicas = Callable[..., list[HttpProcess]]


class Trio(list[HttpProcess]):
    """Three replicas, and the Redis (or Cluster) they share (conftest.trio)."""

    def __init__(self, server: RedisServer, replicas: list[HttpProcess]) -> None:
        super().__init__(replicas)
        self.server = server


#: What a replica logs once it is connected to Redis and serves (it listens before).
SERVING = "sessions on Redis"


def wait_ready(server: HttpProcess, token: str | None = None, seconds: float = 20) -> None:
    """Poll /readyz until it answers 200: a replica listens at once, and serves once Redis
    answers."""
    request = urllib.request.Request(f"{server.base}/readyz")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")

    def ready() -> bool:
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return bool(response.status == 200)
        except urllib.error.HTTPError as exc:
            assert exc.code == 503, f"/readyz answered {exc.code}"
            return False

    until_sync(ready, seconds, lambda: f"not ready:\n{server.stderr}")


#: Round-robin over the replicas, as the simplest balancer does (no affinity at all).
ROUND_ROBIN = """
  server {
    listen 127.0.0.1:{port};
    location / {
      proxy_pass http://replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 120s;
    }
  }
"""

Nginx = Callable[[str], str]


def round_robin(upstreams: list[HttpProcess]) -> str:
    bases = [u.base for u in upstreams]
    return upstream("replicas", bases, " max_fails=1 fail_timeout=30s") + ROUND_ROBIN
