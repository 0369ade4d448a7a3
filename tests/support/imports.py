"""What a process imported, as package-prefix rules: a rule names a package ("aiohttp": the
package and everything under it) or ends in "*" ("codex_mcp.lint*": every module whose
name starts so). Rules, not module names, so a file moved inside its package breaks no test."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from importlib.metadata import entry_points


def imported_modules(log: Iterable[str]) -> set[str]:
    """The modules an `-X importtime` log names."""
    found = set()
    for line in log:
        if line.startswith("import time:") and "|" in line:
            found.add(line.rsplit("|", 1)[-1].strip())
    found.discard("package")  # the log's header line
    return found


def _matches(name: str, rule: str) -> bool:
    if rule.endswith("*"):
        return name.startswith(rule[:-1])
    return name == rule or name.startswith(rule + ".")


def loaded(imported: Iterable[str], rules: Iterable[str], allowed: Iterable[str] = ()) -> list[str]:
    """The modules of `imported` (not in `allowed`) that a rule covers, sorted."""
    rules, allowed = tuple(rules), set(allowed)
    return sorted(
        name for name in set(imported) - allowed if any(_matches(name, rule) for rule in rules)
    )


def entry_module(script: str) -> str:
    """The module of a console script (`codex-mcp` -> its `main`'s module), from the installed
    metadata: where pyproject.toml says it is."""
    (entry,) = entry_points(group="console_scripts", name=script)
    return entry.module


def modules_after(statement: str, under: str) -> set[str]:
    """The modules under `under` that running `statement` loads in a fresh interpreter."""
    program = f"import sys\n{statement}\nprint('\\n'.join(sys.modules))\n"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return set(loaded(done.stdout.split(), [under]))
