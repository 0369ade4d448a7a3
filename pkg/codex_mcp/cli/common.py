from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

from ..core.server import ServerCore


def configure_logging(level: str) -> None:
    """Logs go to stderr: stdout belongs to the protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def configure_core(core: ServerCore, settings: Any) -> None:
    """Apply the settings the core itself uses (either settings shape: the model, or
    the plain defaults of a stdio server started with nothing configured)."""
    keys = settings.request_state_keys
    listed = keys.get_secret_value() if hasattr(keys, "get_secret_value") else keys
    if listed or settings.request_state_key_file:
        from ..settings import state_keys

        try:
            core.request_state_keys = state_keys(listed, settings.request_state_key_file)
            core.request_state_ttl = settings.request_state_ttl
            core.request_states  # noqa: B018 - checks the keys now, not at the first round
        except (OSError, ValueError) as exc:
            raise SystemExit(f"request-state keys: {exc}") from None
    core.request_state_ttl = settings.request_state_ttl


def load_core(spec: str) -> ServerCore:
    """'builtin', 'package.module:attr' or 'path/to/file.py[:attr]' -> a ServerCore."""
    if spec == "builtin":
        from ..builtin import build_server

        return build_server().core
    target, _, attr = spec.partition(":")
    if target.endswith(".py") or "/" in target:
        path = Path(target).resolve()
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"cannot load a server from {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    obj: Any = _find_server(module, attr)
    core = getattr(obj, "core", obj)
    if not isinstance(core, ServerCore):
        raise SystemExit(f"{spec} is not a codex_mcp Server or ServerCore")
    return core


def _find_server(module: Any, attr: str) -> Any:
    if attr:
        obj = getattr(module, attr)
        return obj() if callable(obj) and not hasattr(obj, "core") else obj
    for name in ("server", "app", "mcp"):
        if hasattr(module, name):
            return getattr(module, name)
    if hasattr(module, "build_server"):
        return module.build_server()
    raise SystemExit(f"no server found in {module.__name__}: name it with ':attr'")
