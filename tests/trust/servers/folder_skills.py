"""The library's own skills server over the folder FOLDER_SKILLS_DIR names (served with
`codex-mcp --serve`): what `skills sync` gets from a real server whose folder holds links."""

from __future__ import annotations

import os

from codex_mcp import Server

server = Server("folder-skills", "1.0")
server.add_skills_directory(os.environ["FOLDER_SKILLS_DIR"])
