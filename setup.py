"""Only the package list; everything else is in pyproject.toml.

`[tool.setuptools.package-dir]` maps `codex_mcp.core` to `internal/mcp`, but pyproject's
`find` looks in one tree: this adds the core's packages to those found under `pkg/`, so a
wheel never depends on the `pkg/codex_mcp/core` symlink (a plain file on Windows checkouts).
"""

from setuptools import find_namespace_packages, setup

NOT_PACKAGES = ["*__pycache__*"]

library = find_namespace_packages(
    "pkg", include=["codex_mcp", "codex_mcp.*"], exclude=["codex_mcp.core*", *NOT_PACKAGES]
)
core = ["codex_mcp.core"] + [
    f"codex_mcp.core.{name}"
    for name in find_namespace_packages("internal/mcp", exclude=NOT_PACKAGES)
]
setup(packages=library + core)
