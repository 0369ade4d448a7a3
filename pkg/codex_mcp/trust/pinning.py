"""What the lock says of an item served now (specs/trust.md, "Pinning"): trusted as pinned,
pinned now on its first use, or withheld (changed since trusted; new where nothing new is
trusted); and the lock's changes that follow: a first use pinned, a change or a new item
kept pending for `codex-mcp trust`, which accepts (the pending becomes the pin) or rejects
(the pin stays) it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.skills import digest
from codex_mcp.gateway.config.model import Pinning

from .lock import Kind, LockState, Pin

Verdict = Literal["trusted", "first", "changed", "new", "unpinned"]
WITHHELD: frozenset[Verdict] = frozenset({"changed", "new"})
WHAT_TO_RUN = "run `codex-mcp trust` to review it"


@dataclass(frozen=True, slots=True)
class Seen:
    """An item as a server serves it now."""

    server: str
    kind: Kind
    name: str
    pin: Pin

    @property
    def handle(self) -> str:
        """How `codex-mcp trust` names it: `server/name`."""
        return f"{self.server}/{self.name}"


def judge(state: LockState, mode: Pinning, seen: Seen) -> Verdict:
    if mode == "off":
        return "unpinned"
    trusted = state.get(state.trusted, seen.server, seen.kind, seen.name)
    if trusted is None:
        return "first" if mode == "on-first-use" else "new"
    return "trusted" if trusted.digest == seen.pin.digest else "changed"


def changed_fields(state: LockState, seen: Seen) -> list[str]:
    """The fields of its definition that differ from the pin (all of them: no pin)."""
    trusted = state.get(state.trusted, seen.server, seen.kind, seen.name)
    old = trusted.definition if trusted is not None else {}
    new = seen.pin.definition
    return sorted(key for key in {*old, *new} if old.get(key) != new.get(key))


def reason(state: LockState, seen: Seen, verdict: Verdict) -> str:
    """Why a withheld item is withheld, in words (never its new text: that may be the attack)."""
    what = "tool" if seen.kind == "tools" else "skill"
    if verdict == "new":
        return f"{what} {seen.name!r} of server {seen.server!r} is new, and its pinning is locked"
    fields = ", ".join(changed_fields(state, seen)) or "its definition"
    return f"the {fields} of {what} {seen.name!r} (server {seen.server!r}) changed since it was trusted"


def file_verdict(
    state: LockState, mode: Pinning, server: str, path: str, data: Sequence[bytes]
) -> str | None:
    """Why a skill's file as a child served it (`path`: its URI without `skill://`, `data`:
    the bytes it read) is not served: not what the pin of the skill holding it says (its
    digest, or a file the skill did not have), or in no pinned skill where nothing new is
    trusted. None: served (a file of no pinned skill is a first use: its listing pins it)."""
    if mode == "off":
        return None
    skills = state.trusted.get(server, {}).get("skills", {})
    holders = [name for name in skills if path.startswith(f"{name}/")]
    if not holders:
        if mode == "on-first-use":
            return None
        return f"the file {path!r} of server {server!r} is in no trusted skill, and its pinning is locked"
    name = max(holders, key=len)  # the innermost: a nested skill is a skill of its own
    files = skills[name].definition.get("files")
    if not isinstance(files, dict):
        return None  # a dynamic skill: nothing of its files is pinned
    relative = path[len(name) + 1 :]
    pinned = files.get(relative)
    if data and all(digest(item) == pinned for item in data):
        return None
    what = "changed" if pinned is not None else "is not a file it had"
    return (
        f"the file {relative!r} of skill {name!r} (server {server!r}) {what} since it was trusted"
    )


def refusal(why: str) -> JsonObject:
    """A withheld tool's call: an error result naming the change (never its new text)."""
    text = f"{why}; it is withheld until someone reviews the change: {WHAT_TO_RUN}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


def recording(judged: Iterable[tuple[Seen, Verdict]]) -> Callable[[LockState], bool]:
    """The lock's change for what was just judged, applied to the file as it is when written
    (another gateway may have written since): a first use is pinned unless someone pinned
    it meanwhile (then it is pending like any change), a withheld item is kept pending, and
    an item served as trusted again has nothing pending."""
    items = list(judged)

    def edit(state: LockState) -> bool:
        changed = False
        for seen, verdict in items:
            key = (seen.server, seen.kind, seen.name)
            trusted = state.get(state.trusted, *key)
            if verdict == "unpinned":
                continue
            if trusted is not None and trusted.digest == seen.pin.digest:
                changed |= state.drop(state.pending, *key)
            elif trusted is None and verdict == "first":
                changed |= state.put(state.trusted, *key, seen.pin)
                changed |= state.drop(state.pending, *key)
            else:
                changed |= state.put(state.pending, *key, seen.pin)
        return changed

    return edit


def matching(state: LockState, names: Iterable[str]) -> list[tuple[str, Kind, str]]:
    """The pending items `names` name: a server (all of its), `server/name`, or a name alone."""
    wanted = set(names)
    return [
        (server, kind, name)
        for server, kind, name, _pin in state.items(state.pending)
        if wanted & {server, f"{server}/{name}", name}
    ]


def accepting(items: list[tuple[str, Kind, str]]) -> Callable[[LockState], bool]:
    """The pending definitions become the pins (what was changed is trusted as it is now)."""

    def edit(state: LockState) -> bool:
        for key in items:
            pin = state.get(state.pending, *key)
            if pin is not None:
                state.put(state.trusted, *key, pin)
                state.drop(state.pending, *key)
        return bool(items)

    return edit


def rejecting(items: list[tuple[str, Kind, str]]) -> Callable[[LockState], bool]:
    """The pins stay; what was pending is forgotten (the changed item stays withheld while the
    server serves it, and is pending again when a gateway next sees it)."""

    def edit(state: LockState) -> bool:
        return any([state.drop(state.pending, *key) for key in items])

    return edit
