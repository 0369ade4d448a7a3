"""A decoded `.mcp.json` document -> GatewayConfig, or one ConfigError naming what is wrong
(the shapes and spellings accepted: specs/gateway.md, "Configuration"; written out rather
than pydantic models: specs/decisions.md, 57)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, cast

from codex_mcp.codex_compat.config import CODEX_SCHEMA_MAX_BYTES, RepairConfig, ToolSettings
from codex_mcp.codex_compat.definition import json_kind
from codex_mcp.codex_compat.names import sanitize as sanitize_name

from .json_file import ConfigError
from .model import (
    PINNING_MODES,
    GatewayConfig,
    HttpTarget,
    OAuthConfig,
    Pinning,
    RestartConfig,
    RestartPolicy,
    ServerConfig,
    StdioTarget,
)

SERVER_MAPS = ("mcpServers", "mcp_servers", "servers")
_STDIO_TYPES = {"stdio"}
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp", "streamable"}
_SSE_TYPES = {"sse"}
_RESTART_POLICIES = ("on-failure", "always", "never")
#: The repairs a `"repair"` object switches on or off (every field but the size).
_REPAIR_SWITCHES = tuple(
    f.name for f in dataclasses.fields(RepairConfig) if f.name != "schema_max_bytes"
)
#: Launchers whose first argument names the server better than they do.
_LAUNCHERS = {
    "npx", "uvx", "uv", "node", "python", "python3", "bunx", "bun", "pnpm", "pnpx",
    "yarn", "deno", "docker", "pipx", "java", "go", "cmd", "sh", "bash",
}  # fmt: skip
#: Keys other clients put in the same file; ignored without a warning.
_FOREIGN_KEYS = {
    "autoApprove", "alwaysAllow", "trust", "envFile", "description", "timeout", "oauth",
    "disabledReason", "transportType", "auth", "scopes", "required",
}  # fmt: skip
_ANNOTATION_KEYS = {
    "readOnlyHint": "readOnlyHint", "read_only_hint": "readOnlyHint",
    "destructiveHint": "destructiveHint", "destructive_hint": "destructiveHint",
    "idempotentHint": "idempotentHint", "idempotent_hint": "idempotentHint",
    "openWorldHint": "openWorldHint", "open_world_hint": "openWorldHint",
}  # fmt: skip


def parse_document(
    document: Any,
    source: str,
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> GatewayConfig:
    """`source` is how messages name the file (`~/.codex/.mcp.json`)."""
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    base_dir = path.parent if path is not None else None
    max_children = per_principal = idle = None
    trust: dict[str, Any] = {}
    entries: list[tuple[str, Any, str | None]]
    if isinstance(document, list):
        entries = [(f"[{i}]", entry, None) for i, entry in enumerate(document)]
    elif isinstance(document, dict):
        top = Fields(document, source, env)
        found = [key for key in SERVER_MAPS if key in document]
        if len(found) > 1:
            raise ConfigError(f"{source}: {' and '.join(found)} both list servers; keep one")
        if found:
            entries = _map_entries(found[0], document[found[0]], source)
            top.seen.add(found[0])
            options = top.nested("gateway")
            if options is not None:
                max_children = options.integer(
                    "max_session_children", "maxSessionChildren", minimum=1
                )
                per_principal = options.integer(
                    "max_session_children_per_principal",
                    "maxSessionChildrenPerPrincipal",
                    minimum=1,
                )
                idle = options.number("principal_idle_sec", "principalIdleSec")
                trust = _trust_options(options, base_dir)
                warnings += [f"{source}: gateway: unknown key {k!r}" for k in options.unknown()]
            warnings += [
                f"{source}: unknown top-level key {key!r} (ignored)"
                for key in top.unknown()
                if key not in ("inputs", "$schema")
            ]
        elif document == {}:
            entries = []
        elif any(key in document for key in ("command", "url", "httpUrl", "type")):
            entries = [("(entry)", document, None)]
        else:
            raise ConfigError(
                f"{source}: no servers found: expected {', '.join(SERVER_MAPS)}, a list of "
                'entries, or one entry with "command" or "url"'
            )
    else:
        raise ConfigError(f"{source}: expected an object or a list, not {type(document).__name__}")
    servers = _parse_entries(entries, source, env, base_dir, warnings)
    return GatewayConfig(
        path,
        tuple(servers),
        max_children,
        per_principal,
        idle if idle else None,
        warnings=tuple(warnings),
        **trust,
    )


def _trust_options(options: Fields, base_dir: Path | None) -> dict[str, Any]:
    """`gateway.pinning`, `gateway.lock_file` (relative to the file's folder) and
    `gateway.skills_sync` (specs/trust.md), as GatewayConfig's fields."""
    found: dict[str, Any] = {}
    pinning = _pinning(options)
    if pinning is not None:
        found["pinning"] = pinning
    lock_file = options.string("lock_file", "lockFile")
    if lock_file is not None:
        if not lock_file.strip() or "\0" in lock_file:
            raise options.error("lock_file", "must name a file")
        path = Path(os.path.expanduser(lock_file))
        found["lock_file"] = path if path.is_absolute() or base_dir is None else base_dir / path
    sync = options.boolean("skills_sync", "skillsSync")
    if sync is not None:
        found["skills_sync"] = sync
    return found


def _pinning(fields: Fields) -> Pinning | None:
    mode = fields.string("pinning")
    if mode is not None and mode not in PINNING_MODES:
        raise fields.error("pinning", f"must be one of {', '.join(PINNING_MODES)}, not {mode!r}")
    return cast(Pinning, mode)


def _map_entries(key: str, value: Any, source: str) -> list[tuple[str, Any, str | None]]:
    if isinstance(value, dict):
        return [(f"{key}.{name}", entry, name) for name, entry in value.items()]
    if isinstance(value, list):
        return [(f"{key}[{i}]", entry, None) for i, entry in enumerate(value)]
    raise ConfigError(f"{source}: {key} must be an object of servers")


def _parse_entries(
    entries: list[tuple[str, Any, str | None]],
    source: str,
    env: Mapping[str, str],
    base_dir: Path | None,
    warnings: list[str],
) -> list[ServerConfig]:
    servers: list[ServerConfig] = []
    names: dict[str, str] = {}  # name -> where
    prefixes: dict[str, str] = {}  # sanitized name -> where
    for where, raw, key_name in entries:
        located = f"{source}: {where}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{located}: a server entry must be an object")
        server = parse_server(raw, located, key_name, env, base_dir, warnings)
        if server.name in names:
            if key_name is not None or "name" in raw:
                raise ConfigError(
                    f"{located}: the name {server.name!r} is taken by {names[server.name]}"
                )
            server = replace(server, name=_unique(server.name, names))
        names[server.name] = where
        prefix = sanitize_name(server.name)
        if prefix in prefixes:
            raise ConfigError(
                f"{located}: tool names of {server.name!r} would collide with "
                f"{prefixes[prefix]} (both become {prefix}__...); rename one"
            )
        prefixes[prefix] = where
        servers.append(server)
    return servers


def _unique(name: str, taken: Mapping[str, str]) -> str:
    return next(f"{name}_{n}" for n in itertools.count(2) if f"{name}_{n}" not in taken)


def parse_server(
    raw: Mapping[str, Any],
    where: str,
    key_name: str | None,
    environ: Mapping[str, str],
    base_dir: Path | None,
    warnings: list[str],
) -> ServerConfig:
    fields = Fields(raw, where, environ)
    explicit_name = fields.string("name")
    target = _target(fields, base_dir)
    name = key_name or explicit_name or derive_name(target)
    if not name.strip():
        raise ConfigError(f"{where}: the server name must not be empty")
    enabled = fields.boolean("enabled")
    disabled = fields.boolean("disabled")
    server = ServerConfig(
        name=name,
        target=target,
        where=where,
        enabled=(enabled is not False) and not disabled,
        per_session=bool(fields.boolean("per_session", "perSession")),
        startup_timeout_sec=fields.number("startup_timeout_sec", "startupTimeoutSec"),
        tools_list_timeout_sec=fields.number("tools_list_timeout_sec", "toolsListTimeoutSec"),
        tool_timeout_sec=fields.number("tool_timeout_sec", "toolTimeoutSec"),
        lazy=bool(fields.boolean("lazy")),
        client_capabilities=_client_capabilities(fields),
        idle_timeout_sec=fields.number("idle_timeout_sec", "idleTimeoutSec"),
        restart=_restart(fields),
        repair=_repair(fields),
        enabled_tools=fields.string_list("enabled_tools", "enabledTools", "includeTools"),
        disabled_tools=fields.string_list("disabled_tools", "disabledTools", "excludeTools") or (),
        tools=_tools(fields),
        pinning=_pinning(fields),
        raw=raw,
    )
    unknown = [key for key in fields.unknown() if key not in _FOREIGN_KEYS]
    warnings += [f"{where}: unknown key {key!r} (ignored)" for key in unknown]
    warnings += [
        f"{where}: environment variable {variable} is not set (left as written)"
        for variable in dict.fromkeys(fields.unset_variables)
    ]
    return server


def _target(fields: Fields, base_dir: Path | None) -> StdioTarget | HttpTarget:
    kind = fields.string("type", "transport")
    has_command = fields.has("command")
    has_url = fields.has("url", "httpUrl", "serverUrl")
    if has_command and has_url:
        raise ConfigError(f'{fields.where}: give "command" (stdio) or "url" (HTTP), not both')
    if kind is not None and kind not in _STDIO_TYPES | _HTTP_TYPES | _SSE_TYPES:
        raise fields.error("type", f"must be stdio, http or sse, not {kind!r}")
    if kind in _STDIO_TYPES or (kind is None and not has_url):
        if not has_command:
            raise ConfigError(f'{fields.where}: "command" is missing (or give "url" for HTTP)')
        command = fields.string("command", expand=True, required=True)
        cwd = fields.string("cwd", expand=True)
        if cwd is not None and base_dir is not None and not os.path.isabs(os.path.expanduser(cwd)):
            cwd = str(base_dir / cwd)  # relative to the file that says it, not to whoever reads it
        target = StdioTarget(
            command=cast(str, command),
            args=fields.string_list("args", expand=True) or (),
            env=fields.string_map("env", expand=True) or {},
            cwd=os.path.expanduser(cwd) if cwd is not None else None,
        )
        _check_runnable(fields, target)
        return target
    transport: Literal["http", "sse"] = "sse" if kind in _SSE_TYPES else "http"
    url = fields.string("url", "httpUrl", "serverUrl", expand=True)
    if url is None:
        raise ConfigError(f'{fields.where}: "url" is missing')
    if not re.match(r"https?://", url):
        raise fields.error("url", f"must start with http:// or https://, not {url!r}")
    return HttpTarget(
        url=url,
        headers=fields.string_map("headers", "http_headers", "httpHeaders", expand=True) or {},
        bearer_token_env_var=fields.string("bearer_token_env_var", "bearerTokenEnvVar"),
        env_headers=fields.string_map("env_http_headers", "envHttpHeaders") or {},
        transport=transport,
        oauth=_oauth(fields),
    )


def _check_runnable(fields: Fields, target: StdioTarget) -> None:
    """What the kernel refuses to start a process with is refused here, by its place in the
    file (else the start fails with a Python error and no line of the file)."""
    texts = [("command", target.command), ("cwd", target.cwd or "")]
    texts += [(f"args[{index}]", arg) for index, arg in enumerate(target.args)]
    texts += [(f"env.{name}", value) for name, value in target.env.items()]
    for key, text in texts:
        if "\0" in text:
            raise fields.error(key, "holds a NUL character, which no process can be given")
    for name in target.env:
        if not name or "=" in name or "\0" in name:
            raise fields.error(f"env.{name}", "is not a variable name (empty, or with = or NUL)")


def _oauth(fields: Fields) -> OAuthConfig | None:
    """`"oauth": true` or `{"client_id", "client_secret", "scopes"}` (each optional)."""
    if fields.raw.get("oauth") is True:
        fields.seen.add("oauth")
        return OAuthConfig()
    sub = fields.nested("oauth")
    if sub is None:
        return None
    config = OAuthConfig(
        client_id=sub.string("client_id", "clientId", expand=True),
        client_secret=sub.string("client_secret", "clientSecret", expand=True),
        scopes=sub.string_list("scopes"),
    )
    if sub.unknown():
        raise ConfigError(f"{sub.where}: unknown key(s) {', '.join(map(repr, sub.unknown()))}")
    return config


def derive_name(target: StdioTarget | HttpTarget) -> str:
    """A name for an entry that has none: the server package or script, or the URL's host."""
    if isinstance(target, HttpTarget):
        host = re.sub(r"^https?://", "", target.url).split("/")[0].split(":")[0]
        return host or "http"
    words = [target.command, *target.args]
    command = posixpath.basename(target.command.replace("\\", "/"))
    if re.sub(r"\.(exe|cmd|bat)$", "", command) in _LAUNCHERS:
        words = [arg for arg in target.args if not arg.startswith("-")] or words
        if words and words[0] == "run" and len(words) > 1:  # `uv run x`, `docker run img`
            words = words[1:]
    first = words[0].replace("\\", "/").rstrip("/")
    name = posixpath.basename(re.sub(r"(?<=.)@[^/]*$", "", first))  # @scope/pkg@1.2.3 -> pkg
    return re.sub(r"\.(py|js|mjs|ts|exe)$", "", name) or "server"


def _restart(fields: Fields) -> RestartConfig:
    if isinstance(fields.raw.get("restart"), str):
        policy = fields.string("restart")
        if policy not in _RESTART_POLICIES:
            raise fields.error("restart", f"must be one of {', '.join(_RESTART_POLICIES)}")
        return RestartConfig(policy=cast(RestartPolicy, policy))
    sub = fields.nested("restart")
    if sub is None:
        return RestartConfig()
    policy = sub.string("policy") or "on-failure"
    if policy not in _RESTART_POLICIES:
        raise sub.error("policy", f"must be one of {', '.join(_RESTART_POLICIES)}")
    given: dict[str, Any] = {
        "max_restarts": sub.integer("max_restarts", "maxRestarts"),
        "backoff_initial_sec": sub.number("backoff_initial_sec"),
        "backoff_max_sec": sub.number("backoff_max_sec"),
    }
    _no_unknown(sub)
    return RestartConfig(
        cast(RestartPolicy, policy),
        **{name: value for name, value in given.items() if value is not None},
    )


def _repair(fields: Fields) -> RepairConfig:
    """`"repair": {...}` over the defaults; Codex's `tool_input_schema_max_bytes` is the
    default size."""
    codex_budget = fields.integer("tool_input_schema_max_bytes", minimum=1)
    repair = RepairConfig(schema_max_bytes=codex_budget or CODEX_SCHEMA_MAX_BYTES)
    sub = fields.nested("repair")
    if sub is None:
        return repair
    given: dict[str, Any] = {name: sub.boolean(name) for name in _REPAIR_SWITCHES}
    given["schema_max_bytes"] = sub.integer("schema_max_bytes", minimum=1)
    _no_unknown(sub)
    return replace(repair, **{name: value for name, value in given.items() if value is not None})


def _tools(fields: Fields) -> dict[str, ToolSettings]:
    found = fields.object("tools")
    if found is None:
        return {}
    out = {}
    for tool_name, raw in found[1].items():
        where = f"{fields.where}: tools.{tool_name}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: tool settings must be an object")
        sub = Fields(raw, where, fields.environ)
        rename = sub.string("rename", "name")
        if rename is not None and not rename.strip():
            raise sub.error("rename", "must not be empty")
        annotations: dict[str, Any] = {}
        ann = sub.object("annotations")
        for key, value in (ann[1] if ann else {}).items():
            annotations[_ANNOTATION_KEYS.get(key, key)] = value
        for key in [k for k in raw if k in _ANNOTATION_KEYS]:
            annotations[_ANNOTATION_KEYS[key]] = raw[key]
            sub.seen.add(key)
        for key, value in annotations.items():
            if key.endswith("Hint") and not isinstance(value, bool):
                raise ConfigError(f'{where}: "{key}" must be true or false')
            if key == "title" and not isinstance(value, str):
                raise ConfigError(f'{where}: "annotations.title" must be a string')
        out[tool_name] = ToolSettings(
            hidden=bool(sub.boolean("hidden", "hide")),
            rename=rename,
            description=sub.string("description"),
            annotations=annotations,
        )
        _no_unknown(sub)
    return out


def _client_capabilities(fields: Fields) -> dict[str, Any] | None:
    found = fields.object("client_capabilities", "clientCapabilities")
    if found is None:
        return None
    key, value = found
    # Imported here: it names the core's capabilities, and the core is not needed to read a
    # config (the gateway starts its children before it imports the core: early.py).
    from codex_mcp.codex_compat.client import RELAYED_CAPABILITIES

    for name, declared in value.items():
        if name not in RELAYED_CAPABILITIES:
            raise fields.error(key, f"has {name!r}; it takes {', '.join(RELAYED_CAPABILITIES)}")
        if not isinstance(declared, dict):
            raise fields.error(key, f"{name} must be an object, like {{}}")
    return dict(value)


def _no_unknown(fields: Fields) -> None:
    """Inside our own objects (repair, restart, tools.x), an unknown key is a typo."""
    unknown = fields.unknown()
    if unknown:
        raise ConfigError(f"{fields.where}: unknown key {unknown[0]!r}")


#: The largest number a setting takes (seconds, counts, bytes): over 30 years of seconds.
MAX_NUMBER = 1e9

_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(text: str, environ: Mapping[str, str], unset: list[str]) -> str:
    """`${VAR}`, `${VAR:-default}` (Claude Code) and `${env:VAR}` (Cursor, VS Code). An unset
    variable without a default stays as written, as in Claude Code; its name goes to `unset`."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        unset.append(name)
        return match.group(0)

    return _VARIABLE.sub(replace, text) if "${" in text else text


class Fields:
    """One config object: typed getters that accept a key's aliases and fail with a message
    naming `where` and the key as the user wrote it. `unknown()` lists keys nobody asked for."""

    def __init__(
        self,
        raw: Mapping[str, Any],
        where: str,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.raw = raw
        self.where = where
        self.environ = os.environ if environ is None else environ
        self.seen: set[str] = set()
        self.unset_variables: list[str] = []

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f'{self.where}: "{key}" {problem}')

    def _find(self, *names: str) -> tuple[str, Any] | None:
        found = [name for name in names if name in self.raw]
        self.seen.update(found)
        if len(found) > 1:
            raise ConfigError(
                f"{self.where}: {' and '.join(map(repr, found))} are the same setting"
            )
        return (found[0], self.raw[found[0]]) if found else None

    def has(self, *names: str) -> bool:
        return any(name in self.raw for name in names)

    def _typed(
        self, names: tuple[str, ...], accepts: Callable[[Any], bool], problem: str
    ) -> tuple[str, Any] | None:
        """The key given and its value, unless it is null; a value `accepts` refuses is
        `"<key>" <problem>` (`{kind}` in `problem`: what the value is instead)."""
        found = self._find(*names)
        if found is None or found[1] is None:
            return None
        if not accepts(found[1]):
            raise self.error(found[0], problem.format(kind=json_kind(found[1])))
        return found

    def string(self, *names: str, expand: bool = False, required: bool = False) -> str | None:
        found = self._typed(names, lambda v: isinstance(v, str), "must be a string, not {kind}")
        if found is None:
            if required:
                raise ConfigError(f'{self.where}: "{names[0]}" is missing')
            return None
        key, value = found
        if required and not value.strip():
            raise self.error(key, "must not be empty")
        return self._expand(value) if expand else value

    def string_list(self, *names: str, expand: bool = False) -> tuple[str, ...] | None:
        found = self._typed(names, _is_string_list, "must be a list of strings")
        return None if found is None else tuple(map(self._expand if expand else str, found[1]))

    def string_map(self, *names: str, expand: bool = False) -> dict[str, str] | None:
        found = self._typed(names, _is_object, "must be an object of strings, not {kind}")
        if found is None:
            return None
        key, value = found
        out = {}
        for name, item in value.items():
            if isinstance(item, int | float) and not isinstance(item, bool):
                item = str(item)  # "PORT": 8080 is what people write; the child sees "8080"
            if not isinstance(item, str):
                raise ConfigError(f'{self.where}: "{key}.{name}" must be a string')
            out[name] = self._expand(item) if expand else item
        return out

    def boolean(self, *names: str) -> bool | None:
        found = self._typed(
            names, lambda v: isinstance(v, bool), "must be true or false, not {kind}"
        )
        return None if found is None else bool(found[1])

    def number(self, *names: str, minimum: float = 0, whole: bool = False) -> float | None:
        found = self._typed(names, _is_number, "must be a number, not {kind}")
        if found is None:
            return None
        key, value = found
        if value < minimum:
            raise self.error(key, f"must be at least {minimum:g}")
        if value > MAX_NUMBER:  # a timer or a count this large is a typo, and overflows
            raise self.error(key, f"must be a number no larger than {MAX_NUMBER:g}")
        if whole and value != int(value):
            raise self.error(key, "must be a whole number")
        return float(value)

    def integer(self, *names: str, minimum: int = 0) -> int | None:
        value = self.number(*names, minimum=minimum, whole=True)
        return None if value is None else int(value)

    def object(self, *names: str) -> tuple[str, dict[str, Any]] | None:
        return self._typed(names, _is_object, "must be an object, not {kind}")

    def nested(self, *names: str) -> Fields | None:
        """The object under one of `names`, its messages located under this one's place."""
        found = self.object(*names)
        return found and Fields(found[1], f"{self.where}: {found[0]}", self.environ)

    def unknown(self) -> list[str]:
        return [key for key in self.raw if key not in self.seen]

    def _expand(self, text: str) -> str:
        return expand_variables(text, self.environ, self.unset_variables)


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
