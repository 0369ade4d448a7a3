"""Real nginx on a free loopback port, for the tests that put a reverse proxy in front of
our servers (one place for the config skeleton, the start and the wait)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from support.processes import free_port as free_port

#: The nginx configuration we ship (deploy/nginx), which tests run as it is.
SHIPPED = Path(__file__).resolve().parents[1] / "deploy/nginx/codex-mcp.conf"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

_CONF = """
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections {connections}; }}
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


def upstream(name: str, bases: list[str], options: str = "") -> str:
    """An `upstream` block over base URLs (http://host:port)."""
    servers = "".join(f"    server {b.removeprefix('http://')}{options};\n" for b in bases)
    return f"  upstream {name} {{\n{servers}  }}\n"


def shipped_config(bases: list[str]) -> str:
    """The shipped file with only its replica lines (ours: base URLs http://host:port) and its
    port (a {port} on 127.0.0.1) replaced."""
    text = SHIPPED.read_text()
    servers = "".join(
        f"    server {b.removeprefix('http://')} max_fails=1 fail_timeout=10s;\n" for b in bases
    )
    text, count = re.subn(r"(    server 127\.0\.0\.1:800\d [^\n]*\n)+", servers, text)
    assert count == 1
    text, count = re.subn(r"listen 8000;", "listen 127.0.0.1:{port};", text)
    assert count == 1
    return text


class NginxProxies:
    """Starts nginx processes under `root`; leaving the `with` block ends them all."""

    def __init__(self, root: Path) -> None:
        if NGINX is None:
            pytest.skip("nginx not installed: apt-get install -y nginx")
        self.root = root
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, body: str, connections: int = 256) -> str:
        """nginx serving the http {} `body`, in which `{port}` is its port; returns the
        proxied /mcp URL once it listens."""
        prefix = self.root / f"nginx{len(self.processes)}"
        prefix.mkdir()
        port = free_port()
        config = prefix / "nginx.conf"
        config.write_text(
            _CONF.format(prefix=prefix, connections=connections, body="{body}").replace(
                "{body}", body.replace("{port}", str(port))
            )
        )
        assert NGINX is not None
        process = subprocess.Popen(
            [NGINX, "-p", str(prefix), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.processes.append(process)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return f"http://127.0.0.1:{port}/mcp"
            except OSError:
                error = process.stderr.read() if process.stderr and process.poll() else b""
                assert process.poll() is None, f"nginx exited: {error!r}"
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.05)  # nothing to wait on but the port

    def __enter__(self) -> NginxProxies:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
