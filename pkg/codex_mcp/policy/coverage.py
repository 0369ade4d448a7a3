"""Rules that name nothing (specs/policy.md, "Rules that name nothing"): a `--policy` rule
whose `tool`, `name` or `child` matchers match no tool, resource, prompt or skill the server
could serve is a mistake (a typo; a name the rule does not take) that would otherwise leave
the server serving what the rule was written to hide. On a server that knows what it serves
when it starts, it stops the start with one line naming the near misses; behind a gateway,
whose children list in the background, a rule is checked when the listings of the children
it concerns are known, and said once (a warning naming the rule and what to do)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

from .rules import KINDS, SEPARATOR, Kind, Rule, Target

log = logging.getLogger("codex_mcp.policy")


def glob_of(template: str) -> str:
    """A URI template (`mem://notes/{id}`) as a shell pattern (`mem://notes/*`)."""
    out, depth = [], 0
    for char in template:
        if char == "{":
            depth += 1
            if depth == 1:
                out.append("*")
        elif char == "}":
            depth = max(depth - 1, 0)
        elif not depth:
            out.append(char)
    return "".join(out)


def folder_of(skill: Target) -> Target:
    """A skill (its SKILL.md) as what stands for every file in its folder."""

    def folder(uri: str) -> str:
        return uri.rpartition("/")[0] + "/{file}"

    return Target(skill.kind, folder(skill.name), skill.child, skill.own and folder(skill.own))


class Coverage:
    """The rules of a policy file that name items, and what they were checked against."""

    def __init__(self, rules: Sequence[Rule], source: str, servers: Sequence[str]) -> None:
        # A rule on a gateway's child, on a server that has none, is for another deployment
        # of the same file (one policy for a gateway and the servers it fronts).
        self.pending = [rule for rule in rules if rule.names_items and (servers or not rule.child)]
        self.source = source
        self.servers = tuple(servers)
        #: What is served; and what stands for more than itself (a template, a skill's
        #: folder), its names as shell patterns.
        self.items: set[Target] = set()
        self.globs: set[Target] = set()
        #: (kind, server) whose listing was seen whole (behind a gateway).
        self.listed: set[tuple[Kind, str]] = set()

    def refuse_unknown_servers(self) -> str | None:
        """Behind a gateway: the first rule whose `child` names no configured server."""
        for rule in self.pending:
            if rule.child and not any(_any(s, rule.child) for s in self.servers):
                near = _near(rule.child, self.servers)
                return (
                    f"{self._where(rule)}: child {_shown(rule.child)} names no server of "
                    f"the configuration{near}"
                )
        return None

    def add(self, targets: Iterable[Target], *, patterns: bool = False) -> None:
        """Items a listing showed (`patterns`: URI templates, or skills standing for the
        files in their folders)."""
        for target in targets:
            if patterns:
                self.globs.add(target)
            else:
                self.items.add(target)

    def unmatched(self) -> str | None:
        """The first pending rule that names nothing served, as one line."""
        for rule in self.pending:
            if not self._about(rule):
                return self._message(rule)
        return None

    def seen(self, kind: Kind, up: Iterable[str]) -> None:
        """A listing of `kind` passed, with these servers up: each pending rule that names
        something is settled; one still naming nothing once every server it concerns was
        listed in every kind it concerns is said once, and settled."""
        self.listed.update((kind, server) for server in up)
        for rule in list(self.pending):
            if self._about(rule):
                self.pending.remove(rule)
            elif self._listed_whole(rule):
                self.pending.remove(rule)
                log.warning("%s", self._message(rule))

    # -- matching ------------------------------------------------------------------------
    def _about(self, rule: Rule) -> bool:
        if any(rule.names(item) for item in self.items):
            return True
        patterns = (*rule.tool, *rule.name) or ("*",)
        for held in self.globs:
            if rule.kinds and held.kind not in rule.kinds:
                continue
            if rule.child and not _any(held.child, rule.child):
                continue
            globs = [glob_of(name) for name in held.names]
            if any(fnmatchcase(p, g) or fnmatchcase(g, p) for p in patterns for g in globs):
                return True
        return False

    def _listed_whole(self, rule: Rule) -> bool:
        servers = self._servers_of(rule)
        return all((kind, s) in self.listed for kind in rule.kinds or KINDS for s in servers)

    def _servers_of(self, rule: Rule) -> tuple[str, ...]:
        """The gateway's servers a rule could be about: those its `child` names, or the one
        a qualified name's prefix names, else all."""
        if rule.child:
            return tuple(s for s in self.servers if _any(s, rule.child))
        prefixes = {p.partition(SEPARATOR)[0] for p in (*rule.tool, *rule.name) if SEPARATOR in p}
        named = tuple(s for s in self.servers if s in prefixes)
        return named or self.servers

    # -- saying it -------------------------------------------------------------------------
    def _where(self, rule: Rule) -> str:
        return f"{self.source}: {rule.origin.removeprefix('policy ')}"

    def _message(self, rule: Rule) -> str:
        names = sorted({name for item in (*self.items, *self.globs) for name in item.names})
        asked = (("tool", rule.tool), ("name", rule.name), ("child", rule.child))
        matchers = [f"{key} {_shown(value)}" for key, value in asked if value]
        near = _near((*rule.tool, *rule.name), names)
        return (
            f"{self._where(rule)}: names nothing this server serves ({', '.join(matchers)})"
            f"{near}; name a tool, resource, prompt or skill as it is listed or by its "
            "server's own name, or remove the rule"
        )


def _any(value: str | None, patterns: tuple[str, ...]) -> bool:
    return value is not None and any(fnmatchcase(value, p) for p in patterns)


def _shown(patterns: tuple[str, ...]) -> str:
    return ", ".join(repr(p) for p in patterns)


def _near(asked: Iterable[str], names: Sequence[str]) -> str:
    from difflib import get_close_matches  # only for a rule that names nothing: a mistake

    found: dict[str, None] = {}
    for pattern in asked:
        found.update(dict.fromkeys(get_close_matches(pattern, names, n=3, cutoff=0.6)))
    return f"; near misses: {', '.join(list(found)[:3])}" if found else ""
