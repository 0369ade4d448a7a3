"""The token store: one file per server that only the user can read, written whole."""

from __future__ import annotations

import stat
import time
from pathlib import Path

from codex_mcp.client.oauth import Registration, ServerAuth, Tokens, TokenStore
from codex_mcp.client.oauth.challenge import parse_challenge


def test_tokens_are_kept_per_server_readable_by_the_user_only(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "oauth")
    kept = ServerAuth(
        issuer="https://as.example",
        tokens=Tokens("access", expires_at=time.time() + 3600, refresh_token="refresh"),
        scopes=("mcp:read",),
        registrations={
            "https://as.example": Registration("client", "secret", "client_secret_basic")
        },
    )
    store.save("https://one.example/mcp", kept)
    path = store.path("https://one.example/mcp")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert store.load("https://one.example/mcp") == kept
    assert store.load("https://two.example/mcp") == ServerAuth()
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    assert store.forget("https://one.example/mcp") and not path.exists()
    assert not store.forget("https://one.example/mcp")


def test_a_damaged_file_means_logging_in_again(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("https://one.example/mcp", ServerAuth(issuer="x"))
    store.path("https://one.example/mcp").write_text("{not json")
    assert store.load("https://one.example/mcp") == ServerAuth()


def test_expiry_is_seen_before_the_server_refuses() -> None:
    assert Tokens("a", expires_at=time.time() + 30).expiring()
    assert not Tokens("a", expires_at=time.time() + 3600).expiring()
    assert not Tokens("a").expiring()


def test_challenges_are_read_as_rfc_6750_writes_them() -> None:
    challenge = parse_challenge(
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp"'
    )
    assert challenge.insufficient_scope
    assert challenge.scope == ("files:read", "files:write")
    assert (
        challenge.resource_metadata == "https://r.example/.well-known/oauth-protected-resource/mcp"
    )
    assert parse_challenge("Basic realm=x") == parse_challenge(None)
