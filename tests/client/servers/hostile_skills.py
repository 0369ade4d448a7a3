"""A stdio MCP server (newline-delimited JSON, 2025-11-25) declaring the Skills extension
whose answers are what a careless or hostile server may send: entries that are not entries
(not objects, no resources, resources of another kind, a file outside the skill, a size
that is a boolean, a name that is not the folder's), a cursor that leads back to itself, a
SKILL.md whose frontmatter is an alias bomb (its digest honest), content that is not what
the entry says, a blob that is not base64, a skills/get answered for another skill, and a
directory whose pages never end."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

BOMB = (
    "---\nname: bomb\ndescription: d\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "---\n"
)
FILES = {
    "skill://good/SKILL.md": "---\nname: good\ndescription: fine\n---\n# Good\n",
    "skill://good/notes.md": "notes\n",
    "skill://bomb/SKILL.md": BOMB,
    "skill://liar/SKILL.md": "---\nname: liar\ndescription: d\n---\nlonger than it said\n",
    "skill://blob/SKILL.md": "---\nname: blob\ndescription: d\n---\n",
}


def entry(name: str, *files: str, **overrides: Any) -> dict[str, Any]:
    uri = f"skill://{name}/SKILL.md"
    frontmatter = {"name": name, "description": "fine" if name == "good" else "d"}
    resources = []
    for file in (uri, *files):
        data = FILES[file].encode()
        resources.append(
            {"uri": file, "digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
        )
    return {"uri": uri, "frontmatter": frontmatter, "resources": resources, **overrides}


ENTRIES: list[Any] = [
    "not an object",
    None,
    {"uri": "skill://x/SKILL.md", "frontmatter": {"name": "x", "description": "d"}},
    {
        "uri": "skill://x/SKILL.md",
        "frontmatter": {"name": "x", "description": "d"},
        "resources": "all",
    },
    {**entry("good"), "uri": "skill://good/README.md"},
    {**entry("good"), "frontmatter": {"name": "other", "description": "d"}},
    {**entry("good"), "frontmatter": {"name": "good"}},
    entry(
        "good",
        resources=[
            *entry("good")["resources"],
            {"uri": "skill://evil/x", "digest": "sha256:0", "size": 1},
        ],
    ),
    entry("good", resources=[{**entry("good")["resources"][0], "size": True}]),
    entry("good", resources=[{"uri": "skill://good/notes.md", "digest": "sha256:0", "size": 1}]),
    entry("good", "skill://good/notes.md"),
    entry("bomb"),
    entry("liar", resources=[{**entry("liar")["resources"][0], "size": 5}]),
    entry("blob"),
]


def answer(method: str, params: dict[str, Any]) -> Any:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {
                "resources": {},
                "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": True}},
            },
            "serverInfo": {"name": "hostile-skills", "version": "1"},
        }
    if method == "skills/list":
        return {"skills": ENTRIES, "nextCursor": "again"}  # the same cursor: paging must end
    if method == "skills/get":
        return {"skill": entry("good")}  # whatever was asked
    if method == "resources/read":
        uri = params.get("uri")
        if uri == "skill://blob/SKILL.md":
            return {"contents": [{"uri": uri, "blob": "%%% not base64 %%%"}]}
        if uri == "skill://good/notes.md":
            return {"contents": [{"uri": "skill://good/other.md", "text": FILES[str(uri)]}]}
        return {"contents": [{"uri": uri, "text": FILES.get(str(uri), "")}]}
    if method == "resources/directory/read":
        page = int(str(params.get("cursor") or 0))
        child = {"uri": f"skill://good/{page}.md", "name": f"{page}.md"}
        return {"resources": [child], "nextCursor": str(page + 1)}  # never the last page
    return None


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        request_id = message.get("id")
        if request_id is None:
            continue
        result = answer(message.get("method"), message.get("params") or {})
        if result is None:
            reply: dict[str, Any] = {"error": {"code": -32601, "message": "no"}}
        else:
            reply = {"result": result}
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, **reply}), flush=True)


if __name__ == "__main__":
    main()
