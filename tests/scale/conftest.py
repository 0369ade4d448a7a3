"""Fixtures for replicas sharing sessions through Redis: a real `redis-server` on a free
loopback port (no persistence, no background save), replicas as real `codex-mcp-http`
subprocesses, and a real nginx in front of them. Tests skip when redis-server or nginx
is not installed (scripts/setup.sh installs both when run as root)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # http_process
from http_process import HttpProcess

HERE = Path(__file__).resolve().parent
SHARED = str(HERE / "servers/shared.py")


def _installed(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )


REDIS = _installed("redis-server")
NGINX = _installed("nginx")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert process.poll() is None, f"{what} exited with {process.returncode}"
            assert time.monotonic() < deadline, f"{what} did not start"
            time.sleep(0.05)


class RedisServer:
    """redis-server on a fixed loopback port, stoppable and restartable (empty: no
    persistence, as a restarted cache would be)."""

    def __init__(self) -> None:
        assert REDIS is not None
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        assert REDIS is not None
        self.process = subprocess.Popen(
            [
                REDIS,
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
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process, "redis-server")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    if REDIS is None:
        pytest.skip("redis-server not installed: apt-get install -y redis-server")
    server = RedisServer()
    yield server
    server.stop()


Replicas = Callable[..., list[HttpProcess]]


@pytest.fixture
def replicas(redis_server: RedisServer) -> Iterator[Replicas]:
    """`replicas(n, *args)`: n `codex-mcp-http --serve servers/shared.py --redis-url ...`
    processes on free ports; all stopped after the test."""
    started: list[HttpProcess] = []

    def start(count: int, *args: str) -> list[HttpProcess]:
        group = [
            HttpProcess("--serve", SHARED, "--redis-url", redis_server.url, *args)
            for _ in range(count)
        ]
        started.extend(group)
        return group

    yield start
    for server in started:
        if server.process.poll() is None:
            server.stop()


NGINX_CONF = """
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
{body}
}}
"""

#: Round-robin over the replicas, as the simplest balancer does (no affinity at all).
ROUND_ROBIN = """
  upstream replicas {{
{servers}
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 120s;
    }}
  }}
"""

Nginx = Callable[[str], str]


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`nginx(body)`: nginx on a free port serving the http {} `body` (formatted with
    {port}); returns the proxied /mcp URL. `round_robin(replicas)` builds one."""
    if NGINX is None:
        pytest.skip("nginx not installed: apt-get install -y nginx")
    proxies: list[subprocess.Popen[bytes]] = []

    def start(body: str) -> str:
        prefix = tmp_path / f"nginx{len(proxies)}"
        prefix.mkdir()
        port = free_port()
        config = prefix / "nginx.conf"
        config.write_text(NGINX_CONF.format(prefix=prefix, body=body.replace("{port}", str(port))))
        assert NGINX is not None
        proxy = subprocess.Popen(
            [NGINX, "-p", str(prefix), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proxies.append(proxy)
        wait_for_port(port, proxy, f"nginx ({(prefix / 'error.log')})")
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for proxy in proxies:
        proxy.terminate()
        try:
            proxy.wait(10)
        except subprocess.TimeoutExpired:
            proxy.kill()


def round_robin(upstreams: list[HttpProcess]) -> str:
    servers = "\n".join(
        f"    server {u.base.removeprefix('http://')} max_fails=1 fail_timeout=30s;"
        for u in upstreams
    )
    return ROUND_ROBIN.replace("{servers}", servers).replace("{{", "{").replace("}}", "}")
