"""Operator bounds for `--serve codex`: the most a `codex` call may ask for
(specs/codex-tools.md, "Operator bounds", has the rules and the flags)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from codex_mcp.core.jsonrpc import JsonObject

from ..loopback import is_loopback_host
from .errors import BoundsError, OutOfBounds
from .protocol import ThreadOptions

#: Least to most access; the call's schema takes these three.
SANDBOXES: Final = ("read-only", "workspace-write", "danger-full-access")
#: By how much runs without asking: `untrusted` asks for all but known-safe commands,
#: `never` never asks. The call's schema takes on-request and never; Codex takes all four.
APPROVAL_POLICIES: Final = ("untrusted", "on-request", "on-failure", "never")
#: What a shared server allows when the operator says nothing (`auto`).
SHARED_SANDBOX: Final = "workspace-write"
SHARED_APPROVAL: Final = "on-request"
#: Deeper config tables than this are refused (no config key Codex reads is near it).
MAX_CONFIG_DEPTH: Final = 16
ANY_KEY: Final = "*"
#: Linux's PATH_MAX: a longer cwd is no directory Codex could work in.
_PATH_MAX: Final = 4096
#: A refusal names this many of the keys it refuses (a call may send thousands).
_NAMED_KEYS: Final = 10

_SANDBOX_FLAG: Final = "--codex-max-sandbox (CODEX_MCP_CODEX_MAX_SANDBOX)"
_APPROVAL_FLAG: Final = "--codex-max-approval-policy (CODEX_MCP_CODEX_MAX_APPROVAL_POLICY)"
_CWD_FLAG: Final = "--codex-cwd-root (CODEX_MCP_CODEX_CWD_ROOT)"
_CONFIG_FLAG: Final = "--codex-allow-config (CODEX_MCP_CODEX_ALLOW_CONFIG)"
_SCOPE_FLAG: Final = "--codex-scope-bounds"


@dataclass(frozen=True, slots=True)
class Limits:
    """One set of maxima. `None` for roots or keys: anything goes."""

    sandbox: str = SANDBOXES[-1]
    approval: str = APPROVAL_POLICIES[-1]
    cwd_roots: tuple[Path, ...] | None = None
    config_keys: frozenset[tuple[str, ...]] | None = None

    def raised_by(self, other: Limits) -> Limits:
        """The larger of the two, bound by bound."""
        roots = (
            None
            if self.cwd_roots is None or other.cwd_roots is None
            else tuple(dict.fromkeys(self.cwd_roots + other.cwd_roots))
        )
        keys = (
            None
            if self.config_keys is None or other.config_keys is None
            else self.config_keys | other.config_keys
        )
        return Limits(
            max(self.sandbox, other.sandbox, key=SANDBOXES.index),
            max(self.approval, other.approval, key=APPROVAL_POLICIES.index),
            roots,
            keys,
        )


#: What a scope entry that names nothing raises (nothing).
_NO_RAISE: Final = Limits(SANDBOXES[0], APPROVAL_POLICIES[0], (), frozenset())


@dataclass(frozen=True, slots=True)
class CodexBounds:
    """The server's limits, and what each OAuth scope raises them to."""

    base: Limits = Limits()
    scopes: Mapping[str, Limits] = dataclasses.field(default_factory=dict)

    @property
    def unbounded(self) -> bool:
        return self.base == Limits()

    def limits_for(self, scopes: Iterable[str] | None) -> Limits:
        limits = self.base
        for scope in sorted(set(scopes or ()) & set(self.scopes)):
            limits = limits.raised_by(self.scopes[scope])
        return limits

    def apply(
        self,
        options: ThreadOptions,
        scopes: Iterable[str] | None = None,
        raw_cwd: str | None = None,
        base_cwd: str | None = None,
    ) -> ThreadOptions:
        """The options to send: checked against the caller's limits (raises OutOfBounds,
        naming the bound and the setting that raises it), with omitted values set to
        the bound. `raw_cwd` is the cwd as the call gave it."""
        limits = self.limits_for(scopes)
        sandbox = _within(
            "sandbox", options.sandbox, limits.sandbox, SANDBOXES, _SANDBOX_FLAG, self, "sandbox"
        )
        approval = _within(
            "approval-policy",
            options.approval_policy,
            limits.approval,
            APPROVAL_POLICIES,
            _APPROVAL_FLAG,
            self,
            "approval",
        )
        cwd = options.cwd
        if limits.cwd_roots is not None:
            cwd = _cwd_within(raw_cwd, limits.cwd_roots, base_cwd)
        if limits.config_keys is not None:
            _config_within(options.config, limits.config_keys)
        return dataclasses.replace(options, sandbox=sandbox, approval_policy=approval, cwd=cwd)

    def raising(self, part: str, wanted: str, order: tuple[str, ...]) -> list[str]:
        """The scopes that would allow `wanted` for `part` (a Limits field), for the
        refusal's words."""
        return [
            scope
            for scope, limits in sorted(self.scopes.items())
            if order.index(getattr(limits, part)) >= order.index(wanted)
        ]


def _within(
    name: str,
    wanted: str | None,
    most: str,
    order: tuple[str, ...],
    flag: str,
    bounds: CodexBounds,
    part: str,
) -> str | None:
    if wanted is None:
        # Omitted: the bound, so config.toml's own default cannot go past it.
        return None if most == order[-1] else most
    if order.index(wanted) <= order.index(most):
        return wanted
    scopes = bounds.raising(part, wanted, order)
    via = f"; a token with the OAuth scope {' or '.join(scopes)} may ask for it" if scopes else ""
    raise OutOfBounds(
        f"refused: {name} {wanted!r} is beyond this server's bound (at most {most!r}; order "
        f"{' < '.join(order)}); the operator raises it with {flag}, or for an OAuth scope "
        f"with {_SCOPE_FLAG}{via}. Nothing was started."
    )


def _cwd_within(raw: str | None, roots: tuple[Path, ...], base_cwd: str | None) -> str:
    """The call's cwd, resolved (symlinks followed), when it is under a root; an omitted
    cwd is the first root."""
    if raw is None:
        return str(roots[0])
    where = f"allowed: {', '.join(map(str, roots))}"
    given = raw if len(raw) <= 200 else raw[:200] + "..."  # the refusal stays short
    if len(raw) > _PATH_MAX:
        raise OutOfBounds(f"refused: cwd {given!r} is longer than {_PATH_MAX} characters")
    if ".." in Path(raw).parts:
        raise OutOfBounds(
            f"refused: cwd {given!r} contains '..'; give a path under the server's cwd root "
            f"({where}), set with {_CWD_FLAG}. Nothing was started."
        )
    try:
        resolved = Path(
            os.path.realpath(os.path.join(base_cwd or os.getcwd(), os.path.expanduser(raw)))
        )
    except (ValueError, OSError) as exc:  # an embedded NUL, a symlink loop
        raise OutOfBounds(f"refused: cwd {given!r} is not a usable path ({exc})") from None
    if any(resolved == root or resolved.is_relative_to(root) for root in roots):
        return str(resolved)
    raise OutOfBounds(
        f"refused: cwd {given!r} (resolved: {resolved}) is outside this server's cwd root "
        f"({where}); the operator sets it with {_CWD_FLAG}, or for an OAuth scope with "
        f"{_SCOPE_FLAG} (cwd-root:DIR). Nothing was started."
    )


def config_paths(config: JsonObject) -> list[tuple[str, ...]]:
    """Each overridden key as its dotted path's parts: nested tables flattened, dotted keys
    split (as Codex splits them). Raises OutOfBounds for an empty part or a table nested
    deeper than MAX_CONFIG_DEPTH."""
    paths: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], JsonObject]] = [((), config)]
    while pending:
        prefix, table = pending.pop()
        for key, value in table.items():
            path = prefix + tuple(str(key).split("."))
            if "" in path:
                raise OutOfBounds(f"refused: config key {'.'.join(path)!r} has an empty part")
            if len(path) > MAX_CONFIG_DEPTH:
                raise OutOfBounds(f"refused: config is nested deeper than {MAX_CONFIG_DEPTH} keys")
            if isinstance(value, dict) and value:
                pending.append((path, value))
            else:
                paths.append(path)
    return sorted(paths)


def _config_within(config: JsonObject, allowed: frozenset[tuple[str, ...]]) -> None:
    refused = [
        ".".join(path)
        for path in config_paths(config)
        if not any(path[: len(key)] == key for key in allowed)
    ]
    if refused:
        listed = ", ".join(".".join(key) for key in sorted(allowed)) or "none"
        named = ", ".join(repr(key[:100]) for key in refused[:_NAMED_KEYS])
        if len(refused) > _NAMED_KEYS:
            named += f" and {len(refused) - _NAMED_KEYS} more"
        raise OutOfBounds(
            f"refused: config key(s) {named} are not allowed on this "
            f"server (allowed: {listed}); the operator allows keys with {_CONFIG_FLAG}, or "
            f"for an OAuth scope with {_SCOPE_FLAG} (config:KEY). Nothing was started."
        )


# -- from the settings ------------------------------------------------------------------
def shared_server(settings: Any) -> bool:
    """Does this server serve more than its one local user? HTTP beyond loopback, or with
    OAuth or a token file (several principals). stdio, and loopback HTTP with no token or
    one, serve one local user."""
    host = getattr(settings, "host", None)
    if host is None:
        return False  # stdio
    return (
        not is_loopback_host(host)
        or bool(getattr(settings, "oauth_issuer", None))
        or getattr(settings, "bearer_token_file", None) is not None
    )


def bounds_from_settings(settings: Any, cwd: str | None = None) -> CodexBounds:
    """The bounds `--codex-*` asks for; `auto` and unset values follow `shared_server`.
    Raises BoundsError naming the setting."""
    shared = shared_server(settings)
    sandbox = getattr(settings, "codex_max_sandbox", "auto")
    approval = getattr(settings, "codex_max_approval_policy", "auto")
    root = getattr(settings, "codex_cwd_root", None)
    keys: Sequence[str] = getattr(settings, "codex_allow_config", ())
    if sandbox == "auto":
        sandbox = SHARED_SANDBOX if shared else SANDBOXES[-1]
    if approval == "auto":
        approval = SHARED_APPROVAL if shared else APPROVAL_POLICIES[-1]
    roots: tuple[Path, ...] | None = None
    if root is not None:
        roots = (_root(str(root), "--codex-cwd-root"),)
    elif shared:
        roots = (Path(os.path.realpath(cwd or os.getcwd())),)
    allowed: frozenset[tuple[str, ...]] | None
    if ANY_KEY in keys or (not keys and not shared):
        allowed = None
    else:
        allowed = frozenset(_key(key, "--codex-allow-config") for key in keys)
    entries: Sequence[str] = getattr(settings, "codex_scope_bounds", ())
    scopes = parse_scope_bounds(entries)
    if entries and not getattr(settings, "oauth_issuer", None):
        raise BoundsError(
            "--codex-scope-bounds needs --oauth-issuer (only OAuth tokens carry scopes); "
            "add --oauth-issuer, or drop --codex-scope-bounds"
            if getattr(settings, "host", None) is not None
            else "--codex-scope-bounds is for codex-mcp-http with --oauth-issuer (a stdio "
            "caller carries no OAuth scopes); drop it"
        )
    return CodexBounds(Limits(sandbox, approval, roots, allowed), scopes)


def parse_scope_bounds(entries: Sequence[str]) -> dict[str, Limits]:
    """`SCOPE=sandbox:S approval:P cwd-root:DIR config:KEY ...` entries, by scope."""
    scopes: dict[str, Limits] = {}
    for entry in entries:
        scope, equals, spec = entry.partition("=")
        scope = scope.strip()
        if not equals or not scope or not spec.split():
            raise BoundsError(
                f"--codex-scope-bounds {entry!r}: give SCOPE=sandbox:S approval:P "
                "cwd-root:DIR config:KEY (any of them, space-separated)"
            )
        limits = scopes.get(scope, _NO_RAISE)
        for part in spec.split():
            kind, colon, value = part.partition(":")
            where = f"--codex-scope-bounds {entry!r}"
            if not colon or not value:
                raise BoundsError(f"{where}: {part!r} is not KIND:VALUE")
            if kind == "sandbox" and value in SANDBOXES:
                limits = limits.raised_by(dataclasses.replace(_NO_RAISE, sandbox=value))
            elif kind == "approval" and value in APPROVAL_POLICIES:
                limits = limits.raised_by(dataclasses.replace(_NO_RAISE, approval=value))
            elif kind == "cwd-root":
                limits = limits.raised_by(
                    dataclasses.replace(_NO_RAISE, cwd_roots=(_root(value, where),))
                )
            elif kind == "config":
                keys = None if value == ANY_KEY else frozenset({_key(value, where)})
                limits = limits.raised_by(dataclasses.replace(_NO_RAISE, config_keys=keys))
            else:
                raise BoundsError(
                    f"{where}: {part!r}: the kinds are sandbox:{'|'.join(SANDBOXES)}, "
                    f"approval:{'|'.join(APPROVAL_POLICIES)}, cwd-root:DIR, config:KEY"
                )
        scopes[scope] = limits
    return scopes


def _root(value: str, where: str) -> Path:
    path = Path(os.path.realpath(os.path.expanduser(value)))
    if not path.is_dir():
        raise BoundsError(f"{where} {value!r}: not a directory")
    return path


def _key(value: str, where: str) -> tuple[str, ...]:
    path = tuple(value.strip().split("."))
    if "" in path:
        raise BoundsError(f"{where} {value!r}: not a dotted config key (an empty part)")
    return path
