"""The policy's settings: the `--policy FILE` document, checked whole at start-up (one line
for the first mistake: a mistake never leaves it open), and the rules the older settings
imply (specs/policy.md, "Configuration")."""

from __future__ import annotations

import glob
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import orjson

from .rules import KINDS, Caller, Kind, Rule, Target, judge

if TYPE_CHECKING:
    from ..gateway.config.model import ServerConfig

#: A policy file bigger than this is refused (rules are lines, not megabytes).
MAX_POLICY_BYTES = 1 << 20

_TOP_KEYS = frozenset({"default", "rules", "hook"})
_RULE_KEYS = frozenset(
    {"effect", "kind", "child", "tool", "name", "principal", "subject", "scopes"}
)
_MATCHERS = ("child", "tool", "name", "principal", "subject")
_HOOK_KEYS = frozenset(
    {"url", "timeout_sec", "max_response_bytes", "cache_ttl_sec", "max_concurrent"}
)


class PolicyError(ValueError):
    """A mistake in the policy's settings: one line, naming where."""


@dataclass(frozen=True, slots=True)
class HookConfig:
    """The external decision point: an HTTP POST to `url` (specs/policy.md, "Hook")."""

    url: str
    timeout_sec: float = 1.0
    max_response_bytes: int = 65536
    #: Answers kept this long per exact input (0: none kept).
    cache_ttl_sec: float = 0.0
    #: The most questions open at the hook at once (all listings and calls together).
    max_concurrent: int = 16


@dataclass(frozen=True, slots=True)
class PolicyConfig:
    default: Literal["allow", "deny"] = "allow"
    rules: tuple[Rule, ...] = ()
    hook: HookConfig | None = None
    #: Where it was read (`--policy FILE`), for what is said of its rules later.
    source: str = "policy"


def load_policy(path: Path) -> PolicyConfig:
    """The policy file at `path`, or PolicyError naming the first mistake."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_POLICY_BYTES + 1)
    except OSError as error:
        raise PolicyError(f"--policy {path}: cannot read it: {error.strerror}") from None
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(f"--policy {path}: over {MAX_POLICY_BYTES} bytes")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise PolicyError(f"--policy {path}: not JSON: {error}") from None
    return parse_policy(document, f"--policy {path}")


def parse_policy(document: Any, where: str = "policy") -> PolicyConfig:
    top = _object(document, where, _TOP_KEYS)
    default = top.get("default")
    if default not in ("allow", "deny"):
        raise PolicyError(f'{where}: "default" must be "allow" or "deny" (it is required)')
    raw_rules = top.get("rules", [])
    if not isinstance(raw_rules, list):
        raise PolicyError(f'{where}: "rules" must be a list')
    rules = tuple(
        _rule(each, f"{where}: rules[{i}]", f"policy rules[{i}]")
        for i, each in enumerate(raw_rules)
    )
    hook = _hook(top["hook"], f"{where}: hook") if "hook" in top else None
    return PolicyConfig(cast(Literal["allow", "deny"], default), rules, hook, where)


def _object(value: Any, where: str, keys: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise PolicyError(f"{where}: must be an object")
    unknown = sorted(str(key) for key in value if key not in keys)
    if unknown:
        raise PolicyError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(keys))})")
    return value


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(item, str) and item for item in items)
    ):
        raise PolicyError(f"{where}: must be a non-empty string or list of them")
    return tuple(items)


def _rule(value: Any, where: str, origin: str) -> Rule:
    raw = _object(value, where, _RULE_KEYS)
    effect = raw.get("effect")
    if effect not in ("allow", "deny", "require"):
        raise PolicyError(f'{where}.effect: must be "allow", "deny" or "require"')
    matchers = {key: _patterns(raw[key], f"{where}.{key}") for key in _MATCHERS if key in raw}
    kinds = _patterns(raw["kind"], f"{where}.kind") if "kind" in raw else ()
    for kind in kinds:
        if kind not in KINDS:
            raise PolicyError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    scopes: frozenset[str] = frozenset()
    if effect == "require":
        if "scopes" not in raw:
            raise PolicyError(f'{where}: a "require" rule needs "scopes"')
        scopes = frozenset(_patterns(raw["scopes"], f"{where}.scopes"))
    elif "scopes" in raw:
        raise PolicyError(f'{where}.scopes: only a "require" rule has scopes')
    return Rule(
        effect=effect,
        origin=origin,
        kinds=cast(tuple[Kind, ...], kinds),
        scopes=scopes,
        **matchers,
    )


def _number(raw: Mapping[str, Any], key: str, where: str, default: float, *, low: float) -> float:
    value = raw.get(key, default)
    if type(value) not in (int, float) or not math.isfinite(value) or value < low:
        raise PolicyError(f"{where}.{key}: must be a number, at least {low}")
    return float(value)


def _hook(value: Any, where: str) -> HookConfig:
    from ..exposure import checked_url
    from ..launch import StartupError

    raw = _object(value, where, _HOOK_KEYS)
    url = raw.get("url")
    if not isinstance(url, str):
        raise PolicyError(f"{where}.url: must be a string")
    try:
        checked_url(url, f"{where}.url")
    except StartupError as error:
        raise PolicyError(str(error)) from None
    timeout = _number(raw, "timeout_sec", where, 1.0, low=0.001)
    limit = raw.get("max_response_bytes", 65536)
    if type(limit) is not int or not 2 <= limit <= 1 << 20:
        raise PolicyError(f"{where}.max_response_bytes: must be an integer from 2 to 1048576")
    ttl = _number(raw, "cache_ttl_sec", where, 0.0, low=0.0)
    concurrent = raw.get("max_concurrent", 16)
    if type(concurrent) is not int or not 1 <= concurrent <= 256:
        raise PolicyError(f"{where}.max_concurrent: must be an integer from 1 to 256")
    return HookConfig(url, timeout, limit, ttl, concurrent)


def tool_scope_rules(entries: Sequence[str]) -> tuple[Rule, ...]:
    """`--oauth-tool-scope TOOL=SCOPES` as require rules on the tool's name as served."""
    from ..exposure import parse_tool_scopes

    return tuple(
        Rule("require", f"--oauth-tool-scope {pattern}", kinds=("tool",), name=(pattern,), scopes=s)
        for pattern, s in parse_tool_scopes(list(entries))
    )


def hidden_by_entry(server: ServerConfig, tool: str) -> bool:
    """Do the entry's own lists hide the child's `tool` (the rules below, as decided)?"""
    target = Target("tool", tool, server.name, tool)
    return not judge(entry_rules((server,)), "allow", Caller(), target).allowed


def entry_rules(servers: Iterable[ServerConfig]) -> tuple[Rule, ...]:
    """A gateway entry's `enabled_tools`, `disabled_tools` and per-tool `hidden` as deny
    rules on that child's own tool names (names, not patterns: escaped)."""
    rules: list[Rule] = []
    for server in servers:
        child = (glob.escape(server.name),)
        if server.enabled_tools is not None:
            rules.append(
                Rule(
                    "deny",
                    f"{server.where}.enabled_tools",
                    kinds=("tool",),
                    child=child,
                    unless_tool=tuple(map(glob.escape, server.enabled_tools)),
                )
            )
        hidden = [*server.disabled_tools, *(n for n, s in server.tools.items() if s.hidden)]
        if hidden:
            rules.append(
                Rule(
                    "deny",
                    f"{server.where}.disabled_tools",
                    kinds=("tool",),
                    child=child,
                    tool=tuple(map(glob.escape, hidden)),
                )
            )
    return tuple(rules)
