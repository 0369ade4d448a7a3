"""More than one process serving one HTTP endpoint: sessions, streams, tasks and provider
events kept on Redis (`redis_store`, `records`, `writer`, `bus`, `cluster`) so any replica
serves any request, and `--workers N` (`workers`, `worker_link`) on one port. Loaded only with
`--redis-url` or `--workers` (specs/scale.md)."""

from __future__ import annotations

import importlib.util

from ..worker_process import config_error


def require_redis_client() -> None:
    """One line and EX_CONFIG when the Redis client is not installed: for one process and
    for a `--workers` supervisor alike (which then starts no worker to restart)."""
    if importlib.util.find_spec("redis") is None:
        config_error(
            "codex-mcp-http: --redis-url needs the Redis client: pip install 'codex-mcp[redis]'"
        )
