"""One settings model for every entrypoint: environment (CODEX_MCP_*), .env, CLI flags."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BeforeValidator, Field, SecretStr
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .defaults import DEFAULTS, ENV_FILE, ENV_PREFIX, LogLevel


class Settings(BaseSettings):
    """codex-mcp settings. Every field is also `CODEX_MCP_<NAME>` and `--<name>`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=ENV_FILE,
        env_file_encoding="utf-8",
        extra="ignore",
        cli_kebab_case=True,
        cli_implicit_flags=True,
    )

    serve: str = Field(
        DEFAULTS.serve,
        description="What to serve: 'builtin' (echo and friends), or a server object as "
        "'package.module:attr' or 'path/to/file.py[:attr]'",
    )
    log_level: LogLevel = Field(DEFAULTS.log_level, description="Log level (logs go to stderr)")
    max_message_bytes: int = Field(
        DEFAULTS.max_message_bytes, ge=1024, description="Largest message accepted, in bytes"
    )
    shutdown_timeout: float = Field(
        DEFAULTS.shutdown_timeout,
        ge=0,
        description="Seconds to let in-flight calls finish on EOF or SIGTERM",
    )
    uvloop: bool = Field(DEFAULTS.uvloop, description="Use uvloop when it is installed")
    request_state_keys: SecretStr | None = Field(
        None,
        description="Keys signing 2026-07-28 requestState, comma-separated, 32+ characters "
        "each; the first signs, all verify. Every process serving the same clients needs "
        "them (default: a random key per process)",
    )
    request_state_key_file: Path | None = Field(
        None, description="Read the requestState keys from this file (one per line)"
    )
    request_state_ttl: float = Field(
        DEFAULTS.request_state_ttl,
        gt=0,
        description="Seconds a client has to answer an input-required round",
    )

    def state_keys(self) -> list[str]:
        return state_keys(
            self.request_state_keys.get_secret_value() if self.request_state_keys else None,
            self.request_state_key_file,
        )


def state_keys(listed: str | None, key_file: Path | str | None) -> list[str]:
    """The requestState keys: those listed (comma-separated), then the file's (one a line)."""
    keys = [key.strip() for key in (listed or "").split(",") if key.strip()]
    if key_file is not None:
        lines = Path(key_file).read_text(encoding="utf-8").splitlines()
        keys.extend(line.strip() for line in lines if line.strip())
    return keys


S = TypeVar("S", bound="Settings")


def load_settings(cls: type[S], argv: list[str] | None, prog: str) -> S:
    """Build settings from CLI flags (argv), environment and .env, in that priority."""
    return cls(_cli_parse_args=argv if argv is not None else True, _cli_prog_name=prog)  # type: ignore[call-arg]


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


CommaList = Annotated[list[str], NoDecode, BeforeValidator(_split_commas)]


class HttpSettings(Settings):
    """Settings of `codex-mcp-http` (the same CODEX_MCP_ prefix)."""

    host: str = Field("127.0.0.1", description="Address to bind (loopback by default)")
    port: int = Field(8000, ge=0, le=65535, description="Port to bind (0 picks a free one)")
    base_path: str = Field("", description="Serve under this path prefix, e.g. /tools")
    stateless: bool = Field(False, description="No sessions: every request is self-contained")
    session_ttl: float = Field(
        1800.0, gt=0, description="Seconds before an idle session is evicted"
    )
    max_sessions: int = Field(10_000, ge=1, description="Most live sessions; more are refused")
    allowed_hosts: CommaList = Field(
        default_factory=list, description="Accepted Host headers (default: loopback names)"
    )
    allowed_origins: CommaList = Field(
        default_factory=list, description="Accepted Origins (default: loopback origins)"
    )
    forwarded_hosts: CommaList = Field(
        default_factory=list,
        description="X-Forwarded-Host values a trusted reverse proxy sends (public host names)",
    )
    bearer_token: SecretStr | None = Field(None, description="Require this bearer token")
    bearer_token_file: Path | None = Field(
        None, description="Require a bearer token from this file (one per line)"
    )
    max_body_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="Largest request body")
    keepalive_interval: float = Field(15.0, gt=0, description="Seconds between SSE keepalives")
    json_only: bool = Field(False, description="Never answer a POST with SSE unless asked")
    log_file: Path | None = Field(None, description="Also log here, with bearer tokens redacted")

    def tokens(self) -> list[str]:
        tokens = []
        if self.bearer_token is not None:
            tokens.append(self.bearer_token.get_secret_value())
        if self.bearer_token_file is not None:
            lines = self.bearer_token_file.read_text(encoding="utf-8").splitlines()
            tokens.extend(line.strip() for line in lines if line.strip())
        return tokens
