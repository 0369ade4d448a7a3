"""Every setting, declared once (default, help, group, bounds), and reading them: flags over
the environment (CODEX_MCP_*) over a .env file over the defaults, pydantic-settings only when
there is something to check (specs/decisions.md, 56)."""

from __future__ import annotations

import operator
import os
import typing
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Final, Literal, TypeVar, dataclass_transform

#: `trace` and `warn` are RUST_LOG's words (the Rust codex-mcp-server took its level from RUST_LOG).
LogLevel = Literal["trace", "debug", "info", "warn", "warning", "error", "critical"]
PostStream = Literal["auto", "upgrade", "header"]
OnHangup = Literal["auto", "keep", "cancel"]
SlowClient = Literal["drop", "close"]

ENV_PREFIX: Final = "CODEX_MCP_"
ENV_FILE: Final = ".env"

# Help groups, in the order --help shows them.
SERVING: Final = "Serving"
NETWORK: Final = "Network"
SESSIONS: Final = "Sessions"
LIMITS: Final = "Limits and timeouts"
SECURITY: Final = "Security"
LOGGING: Final = "Logging"
CODEX: Final = "Codex (--serve codex)"
OBSERVING: Final = "Metrics, audit and status"
GROUPS: Final = (SERVING, NETWORK, SESSIONS, LIMITS, SECURITY, LOGGING, OBSERVING, CODEX)


def setting(
    default: Any,
    help: str,
    group: str,
    *,
    metavar: str | None = None,
    shown: str | None = None,
    repr: bool = True,
    **checks: float,
) -> Any:
    """A dataclass field that is a setting. `shown` replaces the default in --help, for a
    default whose meaning needs words (an empty one is "none"); `checks` are pydantic's
    numeric bounds (ge, gt, le); `repr=False` keeps a secret out of the settings' repr."""
    info = {"help": help, "group": group, "metavar": metavar, "shown": shown, "checks": checks}
    return field(default=default, repr=repr, metadata=info)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
class Declared:
    """A frozen record of settings, a dataclass of the fields declared in its class body:
    made from keywords, compared, hashed and shown field by field, as
    `@dataclass(frozen=True)` would. The dataclass writes and compiles six functions per
    class, over some sixty fields, at every start (~40M instructions, a tenth of a stdio
    start: specs/performance.md); these read the fields instead, on objects made once."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # set by dataclass(), below

    def __init_subclass__(cls) -> None:
        dataclass(init=False, repr=False, eq=False)(cls)  # the fields only: nothing written

    def __init__(self, **given: Any) -> None:
        for each in fields(self):
            if each.name in given:
                value = given.pop(each.name)
            else:
                value = each.default if each.default_factory is MISSING else each.default_factory()
            object.__setattr__(self, each.name, value)
        if given:
            raise TypeError(f"{type(self).__name__} has no setting {next(iter(given))!r}")
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, each.name) for each in fields(self) if each.compare)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = (f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({', '.join(shown)})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


# ObserveOptions, CommonDefaults, SendingDefaults and HttpOptions are groups of fields
# the settings are built from, never made themselves.
class ObserveOptions(Declared):
    """What both servers report, and where (codex_mcp.observe)."""

    audit_log: Path | None = setting(
        None,
        "Append one JSON line per tool call and per refused request to this file "
        "(time, principal as a hash of the credential, session, tool, child, duration, "
        "outcome, sizes).",
        OBSERVING,
        metavar="PATH",
    )
    audit_arguments: bool = setting(
        False, "Also write each call's arguments and result into the audit log.", OBSERVING
    )


# -- Codex operator bounds (--serve codex; specs/codex-tools.md, "Operator bounds") -------
CodexSandbox = Literal["auto", "read-only", "workspace-write", "danger-full-access"]
CodexApproval = Literal["auto", "untrusted", "on-request", "on-failure", "never"]
#: What "auto" means for the Codex bounds, per kind of server.
_SHARED: Final = "beyond loopback, or with OAuth or --bearer-token-file"


class CodexBoundsOptions(Declared):
    """The most a `codex` call may ask for (codex_mcp.codex.bounds)."""

    codex_max_sandbox: CodexSandbox = setting(
        "auto",
        "Most sandbox a codex call may ask for (read-only < workspace-write < "
        "danger-full-access); a call that omits it gets this one. auto: workspace-write "
        f"when the server is shared ({_SHARED}), else no bound.",
        CODEX,
        metavar="SANDBOX",
    )
    codex_max_approval_policy: CodexApproval = setting(
        "auto",
        "Most approval policy a codex call may ask for, by how much runs without asking "
        "(untrusted < on-request < on-failure < never); a call that omits it gets this "
        f"one. auto: on-request when the server is shared ({_SHARED}), else no bound.",
        CODEX,
        metavar="POLICY",
    )
    codex_cwd_root: Path | None = setting(
        None,
        "Directory a codex call's cwd must stay under (symlinks resolved, '..' refused); "
        "a call that omits cwd gets this one.",
        CODEX,
        metavar="DIR",
        shown=f"the working directory when the server is shared ({_SHARED}), else none",
    )
    codex_allow_config: Sequence[str] = setting(
        (),
        "Config keys a codex call may override (dotted, e.g. model_reasoning_effort; a "
        "key allows the keys under it; * allows any; repeat, or comma-separate).",
        CODEX,
        metavar="KEY",
        shown=f"none when the server is shared ({_SHARED}), else any",
    )
    codex_scope_bounds: Sequence[str] = setting(
        (),
        "What an OAuth scope raises the bounds to, as SCOPE=sandbox:S approval:P "
        "cwd-root:DIR config:KEY... (space-separated, each part optional; repeat, or "
        "comma-separate entries); needs --oauth-issuer.",
        CODEX,
        metavar="SCOPE=BOUNDS",
    )


class CommonDefaults(ObserveOptions, CodexBoundsOptions):
    """What both servers take."""

    serve: str = setting(
        "builtin",
        "What to serve: builtin (the echo tools), codex (Codex as the codex and "
        "codex-reply tools), package.module:attr or path/to/file.py[:attr].",
        SERVING,
        metavar="SERVER",
    )
    uvloop: bool = setting(True, "Run on uvloop when it is installed.", SERVING)
    log_level: LogLevel = setting(
        "info",
        "How much to log (stderr and --log-file): trace, debug, info, warn(ing), error or critical.",
        LOGGING,
        metavar="LEVEL",
    )
    policy: Path | None = setting(
        None,
        "A policy file (JSON): who may list and use which tools, resources and prompts, "
        "and an optional external decision point (specs/policy.md).",
        SECURITY,
        metavar="FILE",
    )
    log_file: Path | None = setting(
        None,
        "Also log to this file, with bearer tokens redacted.",
        LOGGING,
        metavar="PATH",
        shown="none; $CODEX_HOME/log/codex-rmcp.log when serving codex",
    )
    request_state_keys: str | None = setting(
        None,
        "Keys signing the requestState of 2026-07-28 input-required rounds, "
        "comma-separated, 32+ characters each (the first signs, all verify, so a key "
        "can be rotated); every process serving the same clients needs the same keys.",
        SECURITY,
        metavar="KEYS",
        shown="a random key per process (per supervisor with --workers)",
        repr=False,
    )
    request_state_keys_file: Path | None = setting(
        None,
        "Read the requestState keys from this file (one per line, after any --request-state-keys).",
        SECURITY,
        metavar="PATH",
    )
    request_state_ttl: float = setting(
        600.0, "Seconds a client has to answer a 2026-07-28 input-required round.", LIMITS, gt=0
    )
    max_tasks: int = setting(
        10_000,
        "Most 2026-07-28 tasks this process holds; finished ones make room early, and "
        "past it with all running a new task is refused.",
        LIMITS,
        ge=1,
    )
    max_tasks_per_principal: int = setting(
        1_000,
        "Most 2026-07-28 tasks one caller (bearer credential; all callers, when there "
        "is no auth) holds, counted like --max-tasks.",
        LIMITS,
        ge=1,
    )
    task_input_timeout: float = setting(
        600.0,
        "Seconds a 2026-07-28 task waits in input_required for tasks/update; then its "
        "question fails, and with it the task.",
        LIMITS,
        gt=0,
    )


class SendingDefaults(Declared):
    """How much may wait for one client that reads slowly (specs/isolation.md)."""

    send_buffer_bytes: int = setting(
        8 * 1024 * 1024,
        "Bytes of messages waiting for one client (stdio output, each SSE stream, a "
        "session's replay buffer) past which notifications follow --slow-client; answers "
        "are never dropped.",
        LIMITS,
        ge=65536,
    )


class StdioDefaults(CommonDefaults, SendingDefaults):
    """`codex-mcp`, the stdio server."""

    max_message_bytes: int = setting(
        128 * 1024 * 1024,
        "Largest message accepted; a larger one is answered with an error.",
        LIMITS,
        ge=1024,
    )
    shutdown_timeout: float = setting(
        5.0, "Seconds in-flight calls get to finish after EOF or SIGTERM.", LIMITS, ge=0
    )

    metrics_port: int | None = setting(
        None,
        "Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port, "
        "logged at start).",
        OBSERVING,
        metavar="PORT",
        shown="off",
        ge=0,
        le=65535,
    )


DEFAULTS: Final = StdioDefaults()


class HttpOptions(ObserveOptions, SendingDefaults):
    """How the HTTP transport behaves (transports/http/config.py adds the bearer tokens)."""

    metrics: bool = setting(
        True,
        "Serve Prometheus metrics at /metrics and a status page at / (both behind the "
        "bearer token like /mcp).",
        OBSERVING,
    )
    public_metrics: bool = setting(
        False,
        "Answer /metrics without the bearer token, for a scraper that cannot send one.",
        OBSERVING,
    )
    slow_client: SlowClient = setting(
        "drop",
        "What an SSE stream over --send-buffer-bytes does: drop (the oldest progress and "
        "log notifications; repeated list_changed and resources/updated kept once) or "
        "close (end the stream; the client resumes it with Last-Event-ID).",
        SESSIONS,
        metavar="POLICY",
    )

    host: str = setting("127.0.0.1", "Address to listen on.", NETWORK)
    port: int = setting(
        8000, "Port to listen on (0 picks a free one).", NETWORK, metavar="PORT", ge=0, le=65535
    )
    base_path: str = setting(
        "",
        "Serve every route under this path prefix, e.g. /tools.",
        NETWORK,
        metavar="PREFIX",
    )
    server_card: bool = setting(
        False,
        "Serve an MCP Server Card at <base-path>/mcp/server-card: name, version, "
        "description and public URL, no tools (SEP-2127, a draft extension).",
        NETWORK,
    )
    stateless: bool = setting(
        False,
        "No sessions: every POST stands alone (for replicas behind a load balancer).",
        SESSIONS,
    )
    redis_url: str | None = setting(
        None,
        "Keep sessions in this Redis (redis://host:port/db; the primary Sentinel names: "
        "redis+sentinel://host:port[,host:port...]/SERVICE[/db]; a Cluster: "
        "redis+cluster://host:port[,host:port...]), shared by every process and replica "
        "given the same URL, so any of them serves any request.",
        SESSIONS,
        metavar="URL",
        shown="none: sessions live in this process",
        repr=False,  # it may carry a password
    )
    redis_wait: str = setting(
        "sessions,tasks",
        "With --redis-url: the writes that wait until a Redis replica holds them (WAIT), so "
        "a failover cannot lose them once answered: any of sessions, tasks, events, or none "
        "(waits only while the primary has a replica; not in a Cluster; see specs/scale.md).",
        SESSIONS,
        metavar="KINDS",
    )
    json_only: bool = setting(
        False,
        "Answer a POST with JSON even when the call streams (its messages go to the GET stream).",
        SESSIONS,
    )
    post_stream: PostStream = setting(
        "auto",
        "When a POST's answer becomes SSE: upgrade (when its call first sends something, "
        "if the client accepts SSE), header (while the session holds a GET "
        "stream, only with X-MCP-POST-STREAM: 1; the call's messages go to the GET "
        "stream), or auto (header when serving codex, else upgrade).",
        SESSIONS,
        metavar="MODE",
    )
    on_hangup: OnHangup = setting(
        "auto",
        "What a client hanging up on a POST does to its call: keep (it runs on, its "
        "events resumable with Last-Event-ID), cancel (as if cancelled), or "
        "auto (cancel when serving codex, else keep).",
        SESSIONS,
        metavar="MODE",
    )
    session_ttl: float = setting(1800.0, "Seconds an idle session lives.", SESSIONS, gt=0)
    max_sessions: int = setting(
        10_000,
        "Most sessions at once, throwaway ones and 2026-07-28 listen streams included; "
        "past it, 503.",
        SESSIONS,
        ge=1,
    )
    replay_events: int = setting(
        256, "SSE events kept per session for resuming with Last-Event-ID.", SESSIONS, ge=0
    )
    keepalive_interval: float = setting(
        15.0, "Seconds between SSE keepalive comments.", SESSIONS, gt=0
    )
    max_inflight: int = setting(
        1000, "Most calls running at once across all sessions; past it, 503.", LIMITS, ge=1
    )
    max_session_inflight: int = setting(
        100, "Most calls running at once in one session; past it, 429.", LIMITS, ge=1
    )
    max_connections: int = setting(
        0,
        "Most open connections; at the cap the oldest idle one is closed (0: three quarters "
        "of the open-file limit).",
        LIMITS,
        ge=0,
    )
    max_body_bytes: int = setting(
        16 * 1024 * 1024, "Largest request body; past it, 413.", LIMITS, ge=1024
    )
    header_timeout: float = setting(
        10.0,
        "Seconds a client gets to send a request's headers; past it, 408 and close.",
        LIMITS,
        gt=0,
    )
    body_timeout: float = setting(
        30.0,
        "Seconds a request body may stall between reads; past it, 408 and close.",
        LIMITS,
        gt=0,
    )
    body_min_rate: int = setting(
        1024,
        "Bytes per second a request body must average once it has had --body-timeout "
        "seconds (a trickle that never stalls is cut off too); slower, 408 and close. "
        "0: no minimum.",
        LIMITS,
        ge=0,
    )
    idle_timeout: float = setting(
        75.0, "Seconds a keep-alive connection may sit idle between requests.", LIMITS, gt=0
    )
    shutdown_timeout: float = setting(
        10.0, "Seconds in-flight calls get to finish after SIGTERM.", LIMITS, ge=0
    )
    allowed_hosts: Sequence[str] = setting(
        (),
        "Host headers to accept, comma-separated; * accepts any.",
        SECURITY,
        metavar="HOSTS",
        shown="the loopback names when bound to loopback, else any",
    )
    allowed_origins: Sequence[str] = setting(
        (),
        "Origins to accept, comma-separated; * accepts any.",
        SECURITY,
        metavar="ORIGINS",
        shown="loopback origins",
    )
    forwarded_hosts: Sequence[str] = setting(
        (),
        "X-Forwarded-Host values a trusted reverse proxy sends (its public host names).",
        SECURITY,
        metavar="HOSTS",
    )
    trusted_proxies: Sequence[str] = setting(
        (),
        "Reverse proxies (addresses or networks such as 10.0.0.0/8, comma-separated) whose "
        "X-Forwarded-For names the client: the rightmost address in it not on this list is "
        "the client's (its guessing bound, its name in the refusal and audit logs). From "
        "any other peer the header is ignored.",
        SECURITY,
        metavar="ADDRESSES",
        shown="none: the TCP peer is the client",
    )
    auth_failures_per_minute: int = setting(
        10,
        "Wrong credentials (bearer tokens, OAuth tokens, logins) a client address may send "
        "a minute; past it, 429 with Retry-After and no verdict, the right one included. "
        "Behind a proxy, set --trusted-proxies, or its clients share its address.",
        SECURITY,
        metavar="N",
        ge=1,
    )
    public_readyz: bool = setting(
        False,
        "Answer /readyz without the bearer token, for a readiness probe that cannot "
        "send one (/healthz never needs it).",
        SECURITY,
    )
    allow_unauthenticated_network: bool = setting(
        False,
        "Serve off loopback (a --host other than 127.0.0.1, ::1 or localhost) with no "
        "--bearer-token and no --oauth-issuer: every tool open to whoever reaches the "
        "port. Without it such a start is refused.",
        SECURITY,
    )
    oauth_issuer: str | None = setting(
        None,
        "Accept OAuth access tokens (JWTs) from this authorization server, checked "
        "against the keys its metadata publishes (specs/oauth.md, 'The server').",
        SECURITY,
        metavar="URL",
    )
    oauth_resource: str | None = setting(
        None,
        "This server's public URL as its tokens name it (their audience), e.g. "
        "https://mcp.example.com/mcp; needed with --oauth-issuer.",
        SECURITY,
        metavar="URI",
    )
    oauth_scope: Sequence[str] = setting(
        (),
        "Scopes every OAuth token needs (repeat, or comma-separate).",
        SECURITY,
        metavar="SCOPE",
    )
    oauth_tool_scope: Sequence[str] = setting(
        (),
        "Scopes a tool needs, as TOOL=SCOPE [SCOPE...] (repeat, or comma-separate); "
        "TOOL may be a pattern such as github__* (every tool of a gateway child).",
        SECURITY,
        metavar="TOOL=SCOPES",
    )
    oauth_operator_scope: Sequence[str] = setting(
        ("mcp.operator",),
        "Scopes an OAuth token needs for the status page and /metrics, which show "
        "every session and each child's stderr (repeat, or comma-separate; static "
        "bearer tokens need none).",
        SECURITY,
        metavar="SCOPE",
    )
    cors_origin: Sequence[str] = setting(
        (),
        "Origins whose web pages may call this server (CORS; repeat, or comma-separate).",
        SECURITY,
        metavar="ORIGIN",
        shown="none: no CORS",
    )


class HttpDefaults(HttpOptions, CommonDefaults):
    """`codex-mcp-http`: the transport's options, plus where tokens and logs come from."""

    workers: int = setting(
        1,
        "Serve with this many processes sharing the port (more than 1 needs --redis-url).",
        SERVING,
        ge=1,
        le=256,
    )
    bearer_token: str | None = setting(
        None, "Require this bearer token.", SECURITY, metavar="TOKEN", repr=False
    )
    bearer_token_file: Path | None = setting(
        None,
        "Require a bearer token listed in this file (one per line).",
        SECURITY,
        metavar="PATH",
    )
    codex_max_app_servers: int = setting(
        8,
        "Most Codex app-servers running at once, one per session that called a codex "
        "tool (each about 190 MB RSS, some 35 MB of it its own); past it, a call gets "
        "an error result.",
        CODEX,
        ge=1,
    )


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def flag(name: str) -> str:
    """A setting's command-line flag (how start-up refusals name it, too)."""
    return "--" + name.replace("_", "-")


def configured_by_environment(declaration: type[Any] = StdioDefaults) -> bool:
    """Is any of the declaration's settings set as a CODEX_MCP_* variable (case-insensitive,
    as pydantic-settings reads them), or is there a .env file? Other CODEX_MCP_* variables
    (CODEX_MCP_BENCH_TOOLS, say) are not settings and don't count."""
    names = {env_name(each.name) for each in fields(declaration)}
    return any(key.upper() in names for key in os.environ) or os.path.exists(ENV_FILE)


_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def field_types(declaration: type) -> dict[str, Any]:
    """The declaration's field types, evaluated once (they are written as strings)."""
    types = _FIELD_TYPES.get(declaration)
    if types is None:
        types = _FIELD_TYPES[declaration] = typing.get_type_hints(declaration)
    return types


def split_commas(value: object) -> object:
    """'a,b' (the environment) or ['a,b', 'c'] (repeated flags) -> ['a', 'b', 'c']."""
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list | tuple):
        return [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    return value


class SettingsError(ValueError):
    """Bad values: (field name, what is wrong) for each, in pydantic's words."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems))
        self.problems = problems


D = TypeVar("D")
_HOLDS: Final = {"ge": operator.ge, "gt": operator.gt, "le": operator.le}


def read_settings(declaration: type[D], given: Mapping[str, Any]) -> D:
    """`given` (the flags on the command line, typed by argparse) over the environment and
    .env over the defaults, validated; raises SettingsError naming the bad fields. Only
    flags, each within its bounds, need no pydantic (specs/decisions.md, 56)."""
    checked = [field for field in fields(declaration) if field.name in given]  # type: ignore[arg-type]
    within = all(
        _HOLDS[check](given[field.name], bound)
        for field in checked
        if given[field.name] is not None
        for check, bound in field.metadata["checks"].items()
    )
    if within and not configured_by_environment(declaration):
        hints = field_types(declaration)
        return declaration(**{f.name: _typed(hints[f.name], given[f.name]) for f in checked})
    from .settings_model import read_with_model

    return declaration(**read_with_model(declaration, given))


def _typed(hint: Any, value: Any) -> Any:
    """A flag's value as the declaration types it: argparse gives paths as strings and
    repeated lists as lists of comma-separated strings."""
    if typing.get_origin(hint) is Sequence:
        return tuple(typing.cast(list[str], split_commas(value)))
    if hint is Path or Path in typing.get_args(hint):
        return Path(value)
    return value
