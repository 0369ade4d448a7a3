"""`codex-mcp-http`: the same server over HTTP, for a reverse proxy or Codex's `url =` servers."""

from __future__ import annotations

import logging
import re
import sys

from ..settings import HttpSettings, load_settings
from .common import configure_logging, load_core
from .gateway import gateway_core, intercept

_BEARER = re.compile(r"(bearer\s+)[^\s\"',;]+", re.IGNORECASE)


class RedactBearer(logging.Formatter):
    """File logs never keep bearer tokens (seed 004's rule); stderr stays as is."""

    def format(self, record: logging.LogRecord) -> str:
        return _BEARER.sub(r"\1****", super().format(record))


def main(argv: list[str] | None = None) -> None:
    args, gateway = intercept(sys.argv[1:] if argv is None else argv, "codex-mcp-http")
    settings = load_settings(HttpSettings, args, "codex-mcp-http")
    configure_logging(settings.log_level)
    if settings.log_file is not None:
        handler = logging.FileHandler(settings.log_file, encoding="utf-8")
        handler.setFormatter(RedactBearer("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger().addHandler(handler)
    core = gateway_core(gateway) if gateway is not None else load_core(settings.serve)
    from ..runtime import run
    from ..transports.http import HttpConfig, serve_http

    config = HttpConfig(
        host=settings.host,
        port=settings.port,
        base_path=settings.base_path,
        stateless=settings.stateless,
        session_ttl=settings.session_ttl,
        max_sessions=settings.max_sessions,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        forwarded_hosts=settings.forwarded_hosts,
        bearer_tokens=settings.tokens(),
        max_body_bytes=settings.max_body_bytes,
        keepalive_interval=settings.keepalive_interval,
        shutdown_timeout=settings.shutdown_timeout,
        json_only=settings.json_only,
    )
    run(serve_http(core, config, on_listening=_announce), use_uvloop=settings.uvloop)


def _announce(url: str) -> None:
    print(f"codex-mcp-http listening on {url}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
