"""The HTTP tests' names for a real `codex-mcp-http` subprocess (the launcher itself is
`support.HttpProcess`) and for an in-process client (imported by name, not through conftest,
which pytest may load under another module's name)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from support.processes import HttpProcess as HttpProcess

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"

MakeClient = Callable[..., Awaitable[TestClient[Any, Any]]]
