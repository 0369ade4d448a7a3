"""The policy's rules and the one function that applies them (specs/policy.md, "Rules")."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["tool", "resource", "prompt"]
Action = Literal["list", "call"]
Effect = Literal["allow", "deny", "require"]

KINDS: tuple[Kind, ...] = ("tool", "resource", "prompt")
#: Between a gateway's server name and a child's tool or prompt (gateway/routing/naming.py's).
SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: the credential's fingerprint as logs name it (`sha256:...`, never the
    token), an OAuth token's subject and scopes (None: the caller did not use OAuth), and
    the session (its log label). All None over stdio: the local user."""

    principal: str | None = None
    subject: str | None = None
    scopes: frozenset[str] | None = None
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """What is asked for: a tool, resource or prompt, by the name (or URI) the client
    sees, and, behind a gateway, the child and the child's own name for it."""

    kind: Kind
    name: str
    child: str | None = None
    #: The child's own name (or URI); `name` itself when not behind a gateway.
    own: str = ""

    @property
    def own_name(self) -> str:
        return self.own or self.name

    @property
    def names(self) -> tuple[str, ...]:
        """Every name it goes by: the child's own, and as the user sees it, served
        (`kid__rm`, `mem://kid/x`) and, a tool or prompt, without the server's prefix."""
        if self.child is None:
            return (self.name,)
        if "://" in self.name:
            return (self.own_name, self.name)
        return (self.own_name, self.name, self.name.partition(SEPARATOR)[2] or self.name)

    def named_by(self, patterns: tuple[str, ...]) -> bool:
        """Does a rule's `tool` matcher name it: by the child's own name, or as the user sees
        it (a URI as served; a tool or prompt as served when the pattern holds the `__`
        between server and name, else as served without the server's prefix, so an own
        name's pattern like `*_re*` is not matched against the prefix)."""
        if self.child is None:
            return _any(self.name, patterns)
        if _any(self.own_name, patterns):
            return True
        if "://" in self.name:
            return _any(self.name, patterns)
        qualified = tuple(p for p in patterns if SEPARATOR in p)
        short = tuple(p for p in patterns if SEPARATOR not in p)
        return _any(self.name, qualified) or _any(self.names[2], short)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: which requests it matches (every given matcher must match; each is a list
    of fnmatch patterns, case-sensitive) and what it does with them."""

    effect: Effect
    #: Where the rule came from, for the audit line: `policy.rules[2]`,
    #: `mcpServers.time.disabled_tools`, `--oauth-tool-scope`.
    origin: str
    kinds: tuple[Kind, ...] = ()
    child: tuple[str, ...] = ()
    tool: tuple[str, ...] = ()
    name: tuple[str, ...] = ()
    principal: tuple[str, ...] = ()
    subject: tuple[str, ...] = ()
    #: The rule does not apply to these own names (an allow list turned into a deny rule).
    unless_tool: tuple[str, ...] = ()
    #: effect "require": the OAuth scopes a caller must hold.
    scopes: frozenset[str] = field(default_factory=frozenset)

    def matches(self, caller: Caller, target: Target) -> bool:
        if not self.names(target):
            return False
        if self.principal and not _any(caller.principal, self.principal):
            return False
        return not (self.subject and not _any(caller.subject, self.subject))

    def names(self, target: Target) -> bool:
        """Is the rule about `target`, whoever asks (its kind, child and name matchers)?"""
        if self.kinds and target.kind not in self.kinds:
            return False
        if self.child and not _any(target.child, self.child):
            return False
        if self.tool and not target.named_by(self.tool):
            return False
        if self.unless_tool and _any(target.own_name, self.unless_tool):
            return False
        return not (self.name and not _any(target.name, self.name))

    @property
    def names_items(self) -> bool:
        """Does it name tools, resources, prompts or skills (not only kinds or callers)?"""
        return bool(self.tool or self.name or self.child)


def _any(value: str | None, patterns: tuple[str, ...]) -> bool:
    return value is not None and any(fnmatch.fnmatchcase(value, p) for p in patterns)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    #: Which rule (its origin), "default", or the hook decided.
    by: str
    #: Scopes a `require` rule wanted and the caller lacks (for a step-up answer).
    missing_scopes: frozenset[str] = frozenset()


def judge(
    rules: tuple[Rule, ...], default: Literal["allow", "deny"], caller: Caller, target: Target
) -> Verdict:
    """Deny wins: a matching deny rule denies; then every matching require rule must be
    held by an OAuth caller (a caller without OAuth is not asked for scopes, as before the
    policy: a static token is the operator's); then a matching allow rule allows; else
    the default."""
    allowed_by: str | None = None
    missing: set[str] = set()
    wanted_by: str | None = None
    for rule in rules:
        if not rule.matches(caller, target):
            continue
        if rule.effect == "deny":
            return Verdict(False, rule.origin)
        if rule.effect == "require":
            if caller.scopes is not None and not rule.scopes <= caller.scopes:
                missing |= rule.scopes - caller.scopes
                wanted_by = wanted_by or rule.origin
        elif allowed_by is None:
            allowed_by = rule.origin
    if wanted_by is not None:
        return Verdict(False, wanted_by, frozenset(missing))
    if allowed_by is not None:
        return Verdict(True, allowed_by)
    return Verdict(default == "allow", "default")
