"""One settings model for every entrypoint: environment (CODEX_MCP_*), .env, CLI flags."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

LogLevel = Literal["debug", "info", "warning", "error", "critical"]


class Settings(BaseSettings):
    """codex-mcp settings. Every field is also `CODEX_MCP_<NAME>` and `--<name>`."""

    model_config = SettingsConfigDict(
        env_prefix="CODEX_MCP_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        cli_kebab_case=True,
        cli_implicit_flags=True,
    )

    serve: str = Field(
        "builtin",
        description="What to serve: 'builtin' (echo and friends), or a server object as "
        "'package.module:attr' or 'path/to/file.py[:attr]'",
    )
    log_level: LogLevel = Field("info", description="Log level (logs go to stderr)")
    max_message_bytes: int = Field(
        128 * 1024 * 1024, ge=1024, description="Largest message accepted, in bytes"
    )
    shutdown_timeout: float = Field(
        5.0, ge=0, description="Seconds to let in-flight calls finish on EOF or SIGTERM"
    )
    uvloop: bool = Field(True, description="Use uvloop when it is installed")


def load_settings(cls: type[Settings], argv: list[str] | None, prog: str) -> Settings:
    """Build settings from CLI flags (argv), environment and .env, in that priority."""
    return cls(_cli_parse_args=argv if argv is not None else True, _cli_prog_name=prog)  # type: ignore[call-arg]
