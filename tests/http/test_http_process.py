"""The HTTP server as a real subprocess: behind a real nginx, graceful SIGTERM, redacted file log."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cmd/http"), "--port", "0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    for _ in range(50):
        found = re.search(r"listening on (http://\S+)", process.stderr.readline())
        if found:
            return process, found.group(1)
    process.kill()
    raise AssertionError("the HTTP server did not start")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process, url = start_server(*getattr(request, "param", []))
    yield process, url
    if process.poll() is None:
        process.kill()
    process.wait(10)


async def open_session(http: aiohttp.ClientSession, url: str, **headers: str) -> dict[str, str]:
    async with http.post(url, json=INIT, headers={**JSON, **headers}) as response:
        assert response.status == 200, await response.text()
        return {**JSON, **headers, "Mcp-Session-Id": response.headers["Mcp-Session-Id"]}


async def test_sigterm_lets_the_in_flight_call_finish(
    server: tuple[subprocess.Popen[str], str],
) -> None:
    process, url = server
    async with aiohttp.ClientSession() as http:
        session = await open_session(http, url)
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"seconds": 1}},
        }
        call = asyncio.create_task(
            http.post(url, json=body, headers={**session, "Accept": "application/json"})
        )
        await asyncio.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        response = await asyncio.wait_for(call, 10)
        assert (await response.json())["result"]["content"][0]["text"] == "slept 1 s"
    assert await asyncio.to_thread(process.wait, 10) == 0


def test_file_log_has_session_ids_and_no_bearer_tokens(tmp_path: Path) -> None:
    log_file = tmp_path / "server.log"
    process, url = start_server("--bearer-token", "tok-123456", "--log-file", str(log_file))

    async def exchange() -> None:
        async with aiohttp.ClientSession() as http:
            await open_session(http, url, Authorization="Bearer tok-123456")

    try:
        asyncio.run(exchange())
    finally:
        process.terminate()
        process.wait(10)
    text = log_file.read_text()
    assert re.search(r"\[session [A-Za-z0-9_-]{16,}\] session opened", text), text
    assert "tok-123456" not in text


def test_redacting_formatter_masks_bearer_tokens() -> None:
    import logging

    from codex_mcp.cli.http import RedactBearer

    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "auth: Authorization: Bearer abc.def-123, next", None, None
    )
    assert RedactBearer("%(message)s").format(record) == "auth: Authorization: Bearer ****, next"


@pytest.mark.skipif(NGINX is None, reason="nginx not installed (scripts/setup.sh installs it)")
async def test_behind_nginx_progress_arrives_while_the_call_runs(tmp_path: Path) -> None:
    process, url = start_server("--forwarded-hosts", "mcp.example.test")
    upstream = url.rsplit("/mcp", 1)[0]
    port = free_port()
    (tmp_path / "logs").mkdir()
    config = tmp_path / "nginx.conf"
    config.write_text(f"""
daemon off;
worker_processes 1;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {tmp_path}/body;
  proxy_temp_path {tmp_path}/proxy;
  fastcgi_temp_path {tmp_path}/fastcgi;
  uwsgi_temp_path {tmp_path}/uwsgi;
  scgi_temp_path {tmp_path}/scgi;
  server {{
    listen 127.0.0.1:{port};
    server_name mcp.example.test;
    location / {{
      proxy_pass {upstream};
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Host $host;
    }}
  }}
}}
""")
    assert NGINX is not None
    proxy = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-c", str(config)], stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not start"
                await asyncio.sleep(0.05)
        proxied = f"http://127.0.0.1:{port}/mcp"
        host = {"Host": "mcp.example.test"}
        async with aiohttp.ClientSession() as http:
            session = await open_session(http, proxied, **host)
            body = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "sleep",
                    "arguments": {"seconds": 3},
                    "_meta": {"progressToken": "t"},
                },
            }
            started = time.monotonic()
            arrivals: list[tuple[float, dict[str, Any]]] = []
            async with http.post(proxied, json=body, headers=session) as response:
                assert response.content_type == "text/event-stream"
                async for line in response.content:
                    if line.startswith(b"data: "):
                        arrivals.append((time.monotonic() - started, json.loads(line[6:])))
        progress = [t for t, m in arrivals if m.get("method") == "notifications/progress"]
        final = [t for t, m in arrivals if m.get("id") == 2]
        assert len(progress) == 3 and len(final) == 1
        assert final[0] - progress[0] >= 1.5, arrivals  # the first progress came while the call ran
    finally:
        proxy.terminate()
        proxy.wait(10)
        process.terminate()
        process.wait(10)
