"""The HTTP transports: Streamable HTTP, single-event SSE and the 2024-11-05 HTTP+SSE."""

from .app import create_app, run_http, serve_http
from .config import HttpConfig

__all__ = ["HttpConfig", "create_app", "run_http", "serve_http"]
