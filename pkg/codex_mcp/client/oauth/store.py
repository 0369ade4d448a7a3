"""What a login leaves behind, per MCP server: tokens, issuer, registrations
(specs/oauth.md, "Tokens on disk")."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import logging
import math
import os
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from .endpoints import MAX_BODY_BYTES, printable_token
from .errors import OAuthError, shown

log = logging.getLogger("codex_mcp.client.oauth")

DIR_ENV = "CODEX_MCP_OAUTH_DIR"
#: Refresh this many seconds before a token expires, not after a request failed with it.
REFRESH_MARGIN = 60.0
#: The largest token file we read (a real one is a few KiB).
MAX_STORE_BYTES = MAX_BODY_BYTES
#: How long a process waits for another to finish with the store (its refresh included).
LOCK_TIMEOUT = 90.0
#: How a token is sent, by the token_type that names it (compared case-insensitively).
TOKEN_SCHEMES = {"bearer": "Bearer", "dpop": "DPoP"}
#: The ways a client authenticates at the token endpoint that we implement.
AUTH_METHODS = frozenset({"none", "client_secret_basic", "client_secret_post", "private_key_jwt"})

Complain = Callable[[str], None]


def _number(value: Any) -> float | None:
    """A finite number (not a bool, which JSON would not have meant as one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _scheme(token_type: Any) -> str | None:
    return TOKEN_SCHEMES.get(token_type.lower()) if isinstance(token_type, str) else None


@dataclass(slots=True)
class Tokens:
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None

    @classmethod
    def from_response(
        cls, body: dict[str, Any], previous: Tokens | None = None, where: str = "token endpoint"
    ) -> Tokens:
        """The tokens of a token endpoint's answer. A missing or unusable access token or
        token type is an error; a wrong optional value is treated as absent (and logged)."""
        access = printable_token(body.get("access_token"))
        if access is None:
            raise OAuthError(
                f"{where} answered without a usable access_token "
                f"(got {shown(type(body.get('access_token')).__name__)})"
            )
        raw_type = body.get("token_type", "Bearer")
        scheme = _scheme(raw_type)
        if scheme is None:
            raise OAuthError(f"{where} gave a token of type {shown(raw_type)}: not usable here")
        expires_in = _number(body.get("expires_in"))
        if "expires_in" in body and (expires_in is None or expires_in < 0):
            log.warning("%s: ignoring expires_in %s", where, shown(body["expires_in"]))
            expires_in = None
        refresh = body.get("refresh_token")
        if refresh is not None and printable_token(refresh) is None:
            log.warning("%s: ignoring an unusable refresh_token", where)
        scope = body.get("scope")
        if scope is not None and not isinstance(scope, str):
            log.warning("%s: ignoring scope %s", where, shown(scope))
        return cls(
            access_token=access,
            token_type=scheme,
            expires_at=time.time() + expires_in if expires_in is not None else None,
            # A refresh answer without a new refresh token leaves the old one valid.
            refresh_token=printable_token(refresh)
            if refresh is not None
            else (previous.refresh_token if previous else None),
            scope=_text(scope) if scope is not None else (previous.scope if previous else None),
        )

    @classmethod
    def from_json(cls, data: Any, complain: Complain) -> Tokens | None:
        if not isinstance(data, dict):
            complain(f"tokens is {type(data).__name__}, not an object")
            return None
        access = printable_token(data.get("access_token"))
        scheme = _scheme(data.get("token_type", "Bearer"))
        if access is None or scheme is None:
            complain("tokens: no usable access_token and token_type")
            return None
        expires_at = _number(data.get("expires_at"))
        if data.get("expires_at") is not None and expires_at is None:
            complain("tokens: expires_at is not a number")
        refresh = data.get("refresh_token")
        if refresh is not None and printable_token(refresh) is None:
            complain("tokens: refresh_token is not a usable token")
        scope = data.get("scope")
        if scope is not None and not isinstance(scope, str):
            complain("tokens: scope is not a string")
        return cls(access, scheme, expires_at, printable_token(refresh), _text(scope))

    def expiring(self, margin: float = REFRESH_MARGIN) -> bool:
        return self.expires_at is not None and self.expires_at - margin <= time.time()

    def authorization(self) -> str:
        """The Authorization header value that presents these tokens."""
        return f"{self.token_type} {self.access_token}"


def same_tokens(a: Tokens | None, b: Tokens | None) -> bool:
    """Whether two readings of the store hold the same grant (None: no tokens)."""
    if a is None or b is None:
        return a is b
    return (a.access_token, a.refresh_token) == (b.access_token, b.refresh_token)


@dataclass(slots=True)
class Registration:
    """Our client at one authorization server."""

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"
    redirect_uri: str | None = None
    #: The scopes of the login we registered for (RFC 7591 `scope`, where the server
    #: lists them): a server may grant a client no others, so a login for more registers
    #: again.
    scopes: tuple[str, ...] = ()

    def covers(self, scopes: tuple[str, ...]) -> bool:
        return set(scopes) <= set(self.scopes)

    @classmethod
    def from_json(cls, data: Any, complain: Complain) -> Registration | None:
        if not isinstance(data, dict):
            complain(f"a registration is {type(data).__name__}, not an object")
            return None
        client_id, method = printable_token(data.get("client_id")), data.get("auth_method")
        secret = data.get("client_secret")
        if client_id is None or method not in AUTH_METHODS:
            complain("a registration has no usable client_id and auth_method")
            return None
        if secret is not None and printable_token(secret) is None:
            complain("a registration's client_secret is not usable")
            return None
        return cls(
            client_id,
            _text(secret),
            str(method),
            _text(data.get("redirect_uri")),
            _scope_list(data, "scopes", complain),
        )


@dataclass(slots=True)
class ServerAuth:
    """Everything kept for one MCP server."""

    issuer: str | None = None
    tokens: Tokens | None = None
    #: The scopes last asked for (a step-up asks for these and the new ones).
    scopes: tuple[str, ...] = ()
    registrations: dict[str, Registration] = field(default_factory=dict)
    #: The private key (PEM) DPoP-bound tokens are bound to.
    dpop_key: str | None = None
    #: Scopes a server refused these tokens for lack of (403 insufficient_scope) when no
    #: step-up could be made here (no browser): the next login asks for them too.
    refused_scopes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], complain: Complain | None = None) -> ServerAuth:
        """What `data` holds, each value checked: one of the wrong type is left out and
        `complain` is told (a file another program wrote, or another version)."""
        say: Complain = complain or (lambda _: None)
        issuer, dpop_key = data.get("issuer"), data.get("dpop_key")
        for name, value in (("issuer", issuer), ("dpop_key", dpop_key)):
            if value is not None and not isinstance(value, str):
                say(f"{name} is {type(value).__name__}, not a string")
        raw_tokens = data.get("tokens")
        tokens = Tokens.from_json(raw_tokens, say) if raw_tokens is not None else None
        scopes = _scope_list(data, "scopes", say)
        refused_scopes = _scope_list(data, "refused_scopes", say)
        raw_registrations = data.get("registrations")
        if raw_registrations is None:
            raw_registrations = {}
        elif not isinstance(raw_registrations, dict):
            say("registrations is not an object")
            raw_registrations = {}
        registrations = {}
        for at, value in raw_registrations.items():
            registration = Registration.from_json(value, say)
            if registration is not None:
                registrations[at] = registration
        return cls(_text(issuer), tokens, scopes, registrations, _text(dpop_key), refused_scopes)


def _scope_list(data: dict[str, Any], name: str, say: Complain) -> tuple[str, ...]:
    raw = data.get(name)
    raw = [] if raw is None else raw
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        say(f"{name} is not a list of strings")
    return tuple(s for s in raw if isinstance(s, str)) if isinstance(raw, list) else ()


class Store(Protocol):
    def load(self, server_url: str) -> ServerAuth: ...
    def save(self, server_url: str, auth: ServerAuth) -> None: ...
    def forget(self, server_url: str) -> bool: ...
    def lock(self, server_url: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Held while a process re-reads the server's entry and refreshes or writes it."""
        ...


class MemoryStore:
    def __init__(self) -> None:
        self._kept: dict[str, ServerAuth] = {}

    def load(self, server_url: str) -> ServerAuth:
        kept = self._kept.get(server_url)
        return dataclasses.replace(kept) if kept is not None else ServerAuth()

    def save(self, server_url: str, auth: ServerAuth) -> None:
        self._kept[server_url] = dataclasses.replace(auth)

    def forget(self, server_url: str) -> bool:
        return self._kept.pop(server_url, None) is not None

    def lock(self, server_url: str) -> contextlib.AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # one process: OAuth's own lock is enough


def default_dir() -> Path:
    explicit = os.environ.get(DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local/state"
    return base / "codex-mcp" / "oauth"


class TokenStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_dir()

    def path(self, server_url: str) -> Path:
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:24]
        return self.directory / f"{digest}.json"

    def load(self, server_url: str) -> ServerAuth:
        path = self.path(server_url)

        def complain(problem: str) -> None:
            log.warning("token store %s: %s; ignoring it", path, problem)

        try:
            with path.open("rb") as file:
                content = file.read(MAX_STORE_BYTES + 1)
        except FileNotFoundError:
            return ServerAuth()
        except OSError as exc:
            complain(f"unreadable ({exc.strerror})")
            return ServerAuth()
        if len(content) > MAX_STORE_BYTES:
            complain(f"larger than {MAX_STORE_BYTES} bytes")
            return ServerAuth()
        try:
            data = orjson.loads(content)  # depth-bounded: a deep file is an error here
        except orjson.JSONDecodeError:
            complain("not JSON")
            return ServerAuth()
        if not isinstance(data, dict) or data.get("server") != server_url:
            complain("not this server's entry")
            return ServerAuth()
        return ServerAuth.from_json(data, complain)

    def save(self, server_url: str, auth: ServerAuth) -> None:
        self._private_directory()
        path = self.path(server_url)
        descriptor, temporary = tempfile.mkstemp(  # 0600, a name no one else chose
            prefix=path.stem + ".", suffix=".tmp", dir=self.directory
        )
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(orjson.dumps({"server": server_url, **auth.to_json()}))
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def forget(self, server_url: str) -> bool:
        with contextlib.suppress(FileNotFoundError):
            self.path(server_url).unlink()
            return True
        return False

    @contextlib.asynccontextmanager
    async def lock(self, server_url: str) -> AsyncIterator[None]:
        """An advisory lock (flock) on a file beside the server's: taken without blocking
        the event loop, given up after LOCK_TIMEOUT, released by the kernel if we die."""
        self._private_directory()
        path = self.path(server_url).with_suffix(".lock")
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise OAuthError(f"token store lock {path}: {exc.strerror}") from None
        try:
            deadline, pause = time.monotonic() + LOCK_TIMEOUT, 0.005
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise OAuthError(
                            f"token store {path}: another process has held its lock for "
                            f"{LOCK_TIMEOUT:.0f} s; try again"
                        ) from None
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 0.1)
            yield
        finally:
            os.close(descriptor)  # releases the lock

    def _private_directory(self) -> None:
        """The directory exists, is ours and only ours (0700), or we refuse to use it."""
        directory = self.directory
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            info = directory.stat()
        except OSError as exc:
            raise OAuthError(f"token store {directory}: {exc.strerror}") from None
        if info.st_uid != os.geteuid():
            raise OAuthError(
                f"token store {directory} is owned by uid {info.st_uid}, not by us: "
                f"set {DIR_ENV} to a directory of our own"
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            try:
                directory.chmod(0o700)
            except OSError as exc:
                raise OAuthError(
                    f"token store {directory} is open to other users and cannot be made "
                    f"0700 ({exc.strerror}): run chmod 700 {directory}"
                ) from None
