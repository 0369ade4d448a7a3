"""The one decision: may this caller see (list) or use (call, read, get) this tool,
resource or prompt? Local rules first, then the external hook; every deny is one audit
line (specs/policy.md)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from ..core.log_names import printable
from .config import PolicyConfig
from .hook import DecisionHook, HookFailed
from .rules import Action, Caller, Rule, Target, Verdict, judge

log = logging.getLogger("codex_mcp.policy")

#: The rules an adapter adds (a gateway's entries), read per decision: a reload's.
ExtraRules = Callable[[], tuple[Rule, ...]]


class Policy:
    def __init__(self, config: PolicyConfig, fixed: tuple[Rule, ...] = ()) -> None:
        self.config = config
        #: The older settings' rules (--oauth-tool-scope), before the file's.
        self.fixed = fixed
        self.rules = (*fixed, *config.rules)
        self.hook = DecisionHook(config.hook) if config.hook is not None else None
        #: No rule, no hook, default allow: nothing to ask (an attribute: a relayed call
        #: reads it on its hot path).
        self.allows_everything = not self.rules and self.hook is None and config.default == "allow"

    def adding(self, fixed: tuple[Rule, ...]) -> Policy:
        """This policy with more of the older settings' rules (before anything serves)."""
        kept = tuple(rule for rule in fixed if rule not in self.fixed)
        return Policy(self.config, (*self.fixed, *kept))

    async def decide(
        self, caller: Caller, target: Target, action: Action, extra: tuple[Rule, ...] = ()
    ) -> Verdict:
        verdict = judge((*extra, *self.rules), self.config.default, caller, target)
        if verdict.allowed and self.hook is not None:
            try:
                allowed = await self.hook.allows(caller, target, action)
                verdict = Verdict(allowed, "hook")
            except HookFailed as failure:
                verdict = Verdict(False, f"hook failed closed: {failure}")
        audit(caller, target, action, verdict)
        return verdict

    async def decide_all(
        self,
        caller: Caller,
        targets: Sequence[Target],
        action: Action,
        extra: tuple[Rule, ...] = (),
    ) -> list[Verdict]:
        """`decide` for every item of one listing, in order. The hook is asked by at most
        `max_concurrent` workers (and the hook's own bound holds across listings), each
        question with its own timeout; once one question fails, the listing asks no more
        and denies the rest unasked, so a slow or down hook costs a listing about one
        timeout, not one per item (specs/policy.md, "Hook")."""
        rules = (*extra, *self.rules)
        verdicts = [judge(rules, self.config.default, caller, target) for target in targets]
        hook = self.hook
        if hook is not None:
            asking = iter([i for i, verdict in enumerate(verdicts) if verdict.allowed])
            failure: list[str] = []

            async def worker() -> None:
                for i in asking:  # shared: each item is taken by one worker
                    if failure:
                        why = f"unasked, an earlier question of this listing failed ({failure[0]})"
                        verdicts[i] = Verdict(False, f"hook failed closed: {why}")
                        continue
                    try:
                        allowed = await hook.allows(caller, targets[i], action)
                        verdicts[i] = Verdict(allowed, "hook")
                    except HookFailed as failed:
                        failure.append(str(failed))
                        verdicts[i] = Verdict(False, f"hook failed closed: {failed}")

            workers = min(hook.config.max_concurrent, sum(v.allowed for v in verdicts))
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(worker())
        for target, verdict in zip(targets, verdicts, strict=True):
            audit(caller, target, action, verdict)
        return verdicts

    def scopes_to_call(self, caller: Caller, tool: str) -> frozenset[str]:
        """The scopes the `require` rules on the served name `tool` want and the caller
        lacks: what the HTTP transport names in a 403 insufficient_scope before the call,
        so a client can step up. Such a refusal is audited here like any other (the call
        would be refused by `decide` too, by the same rules)."""
        target = Target("tool", tool)
        missing: set[str] = set()
        origin = ""
        held = caller.scopes or frozenset()
        for rule in self.rules:
            if rule.effect == "require" and rule.matches(caller, target):
                lacking = rule.scopes - held
                if lacking:
                    missing |= lacking
                    origin = origin or rule.origin
        if missing:
            audit(caller, target, "call", Verdict(False, origin, frozenset(missing)))
        return frozenset(missing)

    async def close(self) -> None:
        if self.hook is not None:
            await self.hook.close()


def audit(caller: Caller, target: Target, action: Action, verdict: Verdict) -> None:
    """One line per decision: a deny at INFO, an allow at DEBUG. Names, never secrets: the
    session's label and the credential's fingerprint; what the client sent is `printable`."""
    level = logging.DEBUG if verdict.allowed else logging.INFO
    if not log.isEnabledFor(level):
        return
    log.log(
        level,
        "policy %s: action=%s %s=%s child=%s own=%s principal=%s subject=%s session=%s by=%s",
        "allow" if verdict.allowed else "deny",
        action,
        target.kind,
        printable(target.name),
        printable(target.child) if target.child is not None else "-",
        printable(target.own_name),
        caller.principal or "-",
        printable(caller.subject) if caller.subject is not None else "-",
        caller.session or "-",
        verdict.by,
        extra={
            "policy_decision": "allow" if verdict.allowed else "deny",
            "policy_by": verdict.by,
        },
    )
