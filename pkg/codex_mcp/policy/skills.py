"""A skill under the policy (specs/policy.md, "Skills"): a skill is named by its SKILL.md
URI, and everything in its folder (its files, its subfolders, the folder itself, a nested
skill) is decided as that URI too, besides its own: hiding a skill's SKILL.md hides the
skill whole, so no file or folder of it is listed or readable by its own URI."""

from __future__ import annotations

from collections.abc import Collection

from ..core.skills import SKILL_FILE

SCHEME = "skill://"


def holders(uri: str, skills: Collection[str]) -> list[str]:
    """The SKILL.md URIs (of `skills`, the served ones) of every skill whose folder holds
    `uri` or is `uri`, outermost first; `uri` itself is not among them."""
    if not uri.startswith(SCHEME):
        return []
    segments = uri[len(SCHEME) :].split("/")
    found = []
    for end in range(1, len(segments) + 1):
        candidate = f"{SCHEME}{'/'.join(segments[:end])}/{SKILL_FILE}"
        if candidate != uri and candidate in skills:
            found.append(candidate)
    return found
