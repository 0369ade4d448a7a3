"""The layering the design promises, checked from the sources' imports:

- the core (`internal/mcp`) imports nothing of ours outside itself;
- inside the core, runtime imports run one way (no cycle; the peer below the sessions,
  the sessions below the methods); a module may name a type from above only under
  `if TYPE_CHECKING:`;
- transports never import the server library or the client;
- the client never imports the server library or the transports;
- the gateway's parts import one way (children <- routing, relay <- provider, status,
  serve) in no circle, counting every import, and `codex_mcp.lint` imports none of its
  runtime.
- client modules that once imported each other in a circle no longer do;
- no two top-level packages of `codex_mcp` import each other at module level, and the model
  of Codex (`codex_compat`) imports nothing of ours but the core;
- the policy and observation import only the core (and session_logs) at module level and
  never each other; doctor and scale-out import only their layers; none of them the CLI.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "internal/mcp"
PKG = ROOT / "pkg/codex_mcp"


def _runtime_imports(path: Path, package: str) -> set[str]:
    """Absolute names of the modules `path` imports outside `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    is_package = path.name == "__init__.py"

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(package, node.level, node.module, is_package)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child])

    visit(tree.body)
    return found


def _resolve(package: str, level: int, module: str | None, is_package: bool) -> str:
    """`from .x import y` in `package` (the importing module's package) -> `package.x`."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - level + 1]
    return ".".join(base + ([module] if module else []))


def _modules(root: Path, prefix: str) -> dict[str, Path]:
    modules = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join([prefix, *parts]).rstrip(".")] = path
    return modules


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


CORE_MODULES = _modules(CORE, "codex_mcp.core")


def _core_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in CORE_MODULES.items():
        imports = _runtime_imports(path, _package_of(name, path))
        graph[name] = {i for i in imports if i in CORE_MODULES and i != name}
    return graph


def test_the_core_imports_nothing_of_ours_outside_itself() -> None:
    for name, path in CORE_MODULES.items():
        tree_imports = _runtime_imports(path, _package_of(name, path))
        typing_too = _all_imports(path, _package_of(name, path))
        for imported in tree_imports | typing_too:
            if imported.startswith("codex_mcp"):
                assert imported.startswith("codex_mcp.core"), f"{path}: imports {imported}"


def _all_imports(path: Path, package: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.add(_resolve(package, node.level, node.module, path.name == "__init__.py"))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_core_runtime_imports_have_no_cycle() -> None:
    graph = _core_graph()
    # A package's __init__ re-exports its modules; only module-to-module edges count.
    packages = {n for n, p in CORE_MODULES.items() if p.name == "__init__.py"}
    state: dict[str, int] = {}

    def walk(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node] - packages):
            if state.get(target) == 1:
                cycle = [*trail[trail.index(target) :], target] if target in trail else [target]
                pytest.fail("import cycle in the core: " + " -> ".join(cycle))
            if target not in state:
                walk(target, [*trail, target])
        state[node] = 2

    for node in sorted(set(graph) - packages):
        if node not in state:
            walk(node, [node])


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("errors", "jsonrpc"),
        ("jsonrpc", "peer"),
        ("calls", "inbound"),
        ("calls", "peer"),
        ("outgoing", "peer"),
        ("outgoing", "session"),
        ("inbound", "peer"),
        ("inbound", "session"),
        ("peer", "session"),
        ("peer", "context"),
        ("peer", "methods"),
        ("context", "session"),
        ("session", "methods"),
        ("session", "server"),
        ("provider", "session"),
        ("provider", "methods"),
        ("methods", "server"),
    ],
)
def test_core_layers_run_one_way(lower: str, upper: str) -> None:
    low = f"codex_mcp.core.{lower}"
    high = f"codex_mcp.core.{upper}"
    graph = _core_graph()
    for name, imports in graph.items():
        if name == low or name.startswith(low + "."):
            assert not any(i == high or i.startswith(high + ".") for i in imports), (
                f"{name} imports {upper} at run time"
            )


@pytest.mark.parametrize(
    ("area", "forbidden"),
    [
        ("transports", ("codex_mcp.server", "codex_mcp.client")),
        ("client", ("codex_mcp.server", "codex_mcp.transports")),
    ],
)
def test_transports_and_client_stay_in_their_layer(area: str, forbidden: tuple[str, ...]) -> None:
    for name, path in _modules(PKG / area, f"codex_mcp.{area}").items():
        for imported in _all_imports(path, _package_of(name, path)):
            assert not imported.startswith(forbidden), f"{path}: imports {imported}"


# -- the gateway and lint ---------------------------------------------------------------
# The gateway's parts import one way: children <- routing, relay <- its top (provider,
# status, serve). Its configuration and errors sit beside the children and may be used by
# all. `codex_mcp.lint` (the Codex model, repairs, lint) is a tool for any server: the
# gateway imports it, it imports none of the gateway's runtime. Every import counts here,
# a function-level or `if TYPE_CHECKING:` one too: a circle held by either is still one.
GATEWAY = "codex_mcp.gateway"
SERVING_MODULES = _modules(PKG / "gateway", GATEWAY) | _modules(PKG / "lint", "codex_mcp.lint")
_TOP = tuple(f"{GATEWAY}.{name}" for name in ("provider", "status", "serve"))
_RUNTIME = (*_TOP, f"{GATEWAY}.children", f"{GATEWAY}.routing", f"{GATEWAY}.relay")


def _every_import(path: Path, package: str) -> set[str]:
    """Absolute names of what `path` imports anywhere in it (`from . import x` names x)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(package, node.level, node.module, path.name == "__init__.py")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@functools.cache
def _serving_graph() -> dict[str, set[str]]:
    """Module -> the modules of the gateway and lint it imports (packages' __init__ left
    out: theirs are docstrings, or the gateway's lazy public names). Parsed once: every
    test reads it, some once per module."""
    packages = {n for n, p in SERVING_MODULES.items() if p.name == "__init__.py"}
    return {
        name: {
            i
            for i in _every_import(path, _package_of(name, path))
            if i in SERVING_MODULES and i not in packages and i != name
        }
        for name, path in SERVING_MODULES.items()
        if name not in packages
    }


def _within(name: str, areas: tuple[str, ...]) -> bool:
    return any(name == area or name.startswith(area + ".") for area in areas)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def walk(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*trail[trail.index(target) :], target]
            if target not in state:
                found = walk(target, [*trail, target])
                if found is not None:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = walk(node, [node])
            if found is not None:
                return found
    return None


def test_gateway_and_lint_modules_import_in_no_circle() -> None:
    cycle = _cycle(_serving_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or ())


@pytest.mark.parametrize(
    ("area", "forbidden"),
    [
        # A child is supervised without knowing who routes to it or relays its calls.
        ("children", (*_TOP, f"{GATEWAY}.routing", f"{GATEWAY}.relay")),
        # Routing and relaying are side by side: neither needs the other.
        ("routing", (*_TOP, f"{GATEWAY}.relay")),
        ("relay", (*_TOP, f"{GATEWAY}.routing")),
        # The configuration and errors are below everything that serves.
        ("config", (*_TOP, f"{GATEWAY}.routing", f"{GATEWAY}.relay")),
    ],
)
def test_gateway_parts_import_only_downward(area: str, forbidden: tuple[str, ...]) -> None:
    if area == "config":  # every module of the gateway outside its serving parts
        prefixes: tuple[str, ...] = tuple(
            n for n in SERVING_MODULES if n.startswith(GATEWAY + ".") and not _within(n, _RUNTIME)
        )
    else:
        prefixes = (f"{GATEWAY}.{area}",)
    modules = [n for n in _serving_graph() if _within(n, prefixes)]
    assert modules, f"no module in {area}"
    for name in modules:
        bad = sorted(i for i in _serving_graph()[name] if _within(i, forbidden))
        assert not bad, f"{name} imports {bad}"


def test_lint_imports_none_of_the_gateways_runtime() -> None:
    for name, imports in _serving_graph().items():
        if _within(name, ("codex_mcp.lint",)):
            bad = sorted(i for i in imports if _within(i, _RUNTIME))
            assert not bad, f"{name} imports {bad}"


CLIENT_MODULES = _modules(PKG / "client", "codex_mcp.client")


@pytest.mark.parametrize(
    ("one", "other"),
    [("stateless", "session"), ("oauth.endpoints", "oauth.errors")],
)
def test_client_modules_that_once_imported_each_other_do_not(one: str, other: str) -> None:
    """Not even under TYPE_CHECKING or inside a function: the lower one declares what it
    needs (stateless.AnsweringPeer; `shown` lives with the errors it words)."""
    for a, b in ((one, other), (other, one)):
        name = f"codex_mcp.client.{a}"
        path = CLIENT_MODULES[name]
        imported = _all_imports(path, _package_of(name, path))
        assert f"codex_mcp.client.{b}" not in imported or (a, b) in (
            ("session", "stateless"),
            ("oauth.endpoints", "oauth.errors"),
        ), f"{name} imports codex_mcp.client.{b}"


# -- top-level packages ------------------------------------------------------------------
# A package may use another at module level, or be used by it, not both: the model of Codex
# (`codex_compat`) sits below lint, doctor, the gateway and the client, none of which it
# imports. A function-level import is a deferred use (cli's commands), not a tie.
#: Pairs still tied both ways, each to be cut by the work named (remove it then).
STILL_TIED: dict[frozenset[str], str] = {}


def _module_level_imports(path: Path, package: str) -> set[str]:
    """What `path` imports when it is imported: not in a function, not for type checking."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.add(_resolve(package, node.level, node.module, path.name == "__init__.py"))
            elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)])

    visit(ast.parse(path.read_text(), str(path)).body)
    return found


def _top_package(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != "codex_mcp":
        return None
    return parts[1] if parts[1] == "core" or (PKG / parts[1]).is_dir() else None


def _package_edges() -> dict[tuple[str, str], str]:
    edges: dict[tuple[str, str], str] = {}
    for name, path in _modules(PKG, "codex_mcp").items():
        here = _top_package(name)
        for imported in _module_level_imports(path, _package_of(name, path)):
            there = _top_package(imported)
            if here and there and there != here:
                edges.setdefault((here, there), f"{name} imports {imported}")
    return edges


def test_no_two_top_level_packages_import_each_other() -> None:
    edges = _package_edges()
    tied = {frozenset(pair) for pair in edges if pair[::-1] in edges}
    for pair in tied - set(STILL_TIED):
        one, other = sorted(pair)
        pytest.fail(f"{edges[one, other]} and {edges[other, one]}")
    for pair in set(STILL_TIED) - tied:
        pytest.fail(f"{' and '.join(sorted(pair))} are no longer tied: drop them from STILL_TIED")


def test_the_codex_model_imports_nothing_of_ours_but_the_core() -> None:
    for name, path in _modules(PKG / "codex_compat", "codex_mcp.codex_compat").items():
        for imported in _all_imports(path, _package_of(name, path)):
            if imported.startswith("codex_mcp."):
                assert _top_package(imported) in ("core", "codex_compat"), f"{name}: {imported}"


# -- the policy, observation, doctor and scale-out ---------------------------------------
# What each may import at module level, by top-level package of codex_mcp (its own aside),
# the policy and observation right above the core, beside each other; doctor a command over
# the client, the gateway's configuration and the Codex model; scale-out on the transports
# it shares sessions for. And the pairs that never import each other at all, not even in a
# function: the policy and observation (they were a cycle), and these four and the CLI.
MODULE_LEVEL = {
    "policy": {"core", "session_logs"},
    "observe": {"core", "session_logs"},
    "doctor": {"client", "core", "gateway", "lint", "codex_compat"},
    "scale": {"core", "observe", "session_logs", "transports", "worker_process"},
}
NEVER = [
    ("policy", "observe"),
    ("observe", "policy"),
    *((area, "cli") for area in MODULE_LEVEL),
    *((area, "doctor") for area in ("policy", "observe", "scale")),
]


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__version__" else ""


@pytest.mark.parametrize("area", sorted(MODULE_LEVEL))
def test_packages_import_only_their_layers_at_module_level(area: str) -> None:
    modules = _modules(PKG / area, f"codex_mcp.{area}")
    assert modules, f"no package {area}"
    for name, path in modules.items():
        imported = _module_level_imports(path, _package_of(name, path))
        tops = {_top(i) for i in imported if i.startswith("codex_mcp.")}
        bad = sorted(tops - MODULE_LEVEL[area] - {area, ""})
        assert not bad, f"{name} imports {bad} at module level"


@pytest.mark.parametrize(("area", "other"), NEVER)
def test_packages_that_never_import_each_other(area: str, other: str) -> None:
    for name, path in _modules(PKG / area, f"codex_mcp.{area}").items():
        bad = sorted(i for i in _all_imports(path, _package_of(name, path)) if _top(i) == other)
        assert not bad, f"{name} imports {bad}"
