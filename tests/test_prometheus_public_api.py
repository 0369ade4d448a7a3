"""Metrics use prometheus_client's public API only (decision 55): a module that imports
it touches no private attribute (`x._name`) of anything but itself, and imports no
private name from it, so the next prometheus_client release cannot break a series
silently. Checked from the sources, as test_layering.py checks the imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "pkg/codex_mcp").rglob("*.py")), *sorted((ROOT / "internal").rglob("*.py"))]  # fmt: skip


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _uses_prometheus(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name.split(".")[0] == "prometheus_client" for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == (
            "prometheus_client"
        ):
            return True
    return False


def private_uses(source: str) -> list[str]:
    """Where a module that imports prometheus_client reaches into something's private
    attributes (its own, through self or cls, are its business) or imports a private name."""
    tree = ast.parse(source)
    if not _uses_prometheus(tree):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "prometheus_client"
        ):
            parts = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
            if any(_private(part) for part in parts):
                found.append(f"line {node.lineno}: from {node.module} import ...")
    return found


def test_no_module_touches_private_attributes_of_prometheus_client() -> None:
    found = {
        str(path.relative_to(ROOT)): uses
        for path in SOURCES
        if (uses := private_uses(path.read_text()))
    }
    assert found == {}


def test_the_check_sees_a_private_attribute_and_a_private_import() -> None:
    """The check itself: the two shapes the old code had are caught, `self._x` is not."""
    bad = "from prometheus_client import Histogram\nh = Histogram('a', 'b')\nh._sum.inc(1)\n"
    assert private_uses(bad) == ["line 3: h._sum"]
    hidden = "from prometheus_client.metrics import _build_full_name\n"
    assert private_uses(hidden) == ["line 1: from prometheus_client.metrics import ..."]
    own = "import prometheus_client\nclass A:\n    def f(self):\n        return self._x\n"
    assert private_uses(own) == []
