"""Fixtures for a real stdio server subprocess (support.StdioServer) spoken to line by line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.processes import StdioServer as StdioServer

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).parent / "servers"


@pytest.fixture
def server() -> Iterator[StdioServer]:
    peer = StdioServer()
    peer.initialize()
    yield peer
    peer.stop()


@pytest.fixture
def spawn() -> Iterator[Any]:
    started: list[StdioServer] = []

    def start(*args: str) -> StdioServer:
        peer = StdioServer(*args)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        peer.stop()
