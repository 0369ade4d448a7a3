"""A library server serving skills over stdio: every skill folder under the directory given
as its argument, and one skill defined in code (`code-review`, with a template), with a
page size of 2 so a listing of three or more skills takes more than one page."""

from __future__ import annotations

import sys

from codex_mcp import Server

server = Server("skills-demo", page_size=2, cache_ttl_ms=60_000, cache_scope="public")
if len(sys.argv) > 1:
    server.add_skills_directory(sys.argv[1])
server.add_skill(
    "code-review",
    "Review a change the way this team does",
    "# Code review\n\nUse `templates/comment.md` for each finding.\n",
    files={"templates/comment.md": "**Finding**: ...\n"},
    prefix="team",
    frontmatter={"license": "MIT", "metadata": {"version": "1.0"}},
)


@server.tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    server.run()
