from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

from ..core.request_state import RequestStateCodec
from ..core.server import ServerCore
from ..session_logs import LINE_FORMAT, RedactBearer, SessionTag, level_number
from ..settings import CommonDefaults


def configure_logging(level: str, log_file: Path | None = None) -> None:
    """Logs go to stderr (stdout belongs to the protocol) and, when given, to `log_file`
    with bearer tokens redacted; lines about a session carry its id."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LINE_FORMAT))
    handlers: list[logging.Handler] = [handler]
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            raise SystemExit(f"cannot open the log file {log_file}: {exc}") from None
        file_handler.setFormatter(RedactBearer(LINE_FORMAT))
        handlers.append(file_handler)
    for each in handlers:
        each.addFilter(SessionTag())
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level_number(level))


def request_state_keys(settings: CommonDefaults) -> list[str]:
    """The configured requestState keys: --request-state-keys (comma-separated), then the
    lines of --request-state-keys-file; checked now, so a bad key stops the start."""
    keys = [key.strip() for key in (settings.request_state_keys or "").split(",") if key.strip()]
    if settings.request_state_keys_file is not None:
        try:
            lines = Path(settings.request_state_keys_file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SystemExit(f"cannot read --request-state-keys-file: {exc}") from None
        keys.extend(line.strip() for line in lines if line.strip())
    if keys:
        try:
            RequestStateCodec(keys)
        except ValueError as exc:
            raise SystemExit(f"--request-state-keys: {exc}") from None
    return keys


def configure_core(
    core: ServerCore, settings: CommonDefaults, supervisor_key: str | None = None
) -> None:
    """Apply the settings the core itself uses: the requestState keys and lifetime, the
    task caps.
    Without configured keys, a worker of `--workers` signs with its supervisor's key
    and any other process with a random key of its own (the core makes it)."""
    core.request_state_ttl = settings.request_state_ttl
    core.tasks.max_tasks = settings.max_tasks
    core.tasks.max_per_principal = settings.max_tasks_per_principal
    core.tasks.input_timeout = settings.task_input_timeout
    keys = request_state_keys(settings)
    if not keys and supervisor_key is not None:
        keys = [supervisor_key]
    if keys:
        core.request_state_keys = keys


def log_file_for(settings: CommonDefaults) -> Path | None:
    """--log-file, else `$CODEX_HOME/log/codex-rmcp.log` when serving codex (where the Rust
    codex-mcp-server kept its log)."""
    if settings.log_file is not None or settings.serve != "codex":
        return settings.log_file
    from ..codex.home import default_log_file

    return default_log_file()


def load_core(spec: str, settings: CommonDefaults | None = None) -> ServerCore:
    """'builtin', 'codex', 'package.module:attr' or 'path/to/file.py[:attr]' -> a ServerCore."""
    if spec == "builtin":
        from ..builtin import build_server

        return build_server().core
    if spec == "codex":
        from ..codex.bounds import bounds_from_settings
        from ..codex.errors import BoundsError
        from ..codex.provider import DEFAULT_MAX_APP_SERVERS
        from ..codex.provider import build_server as build_codex

        limit = getattr(settings, "codex_max_app_servers", None) or DEFAULT_MAX_APP_SERVERS
        try:
            bounds = bounds_from_settings(settings)
        except BoundsError as exc:
            raise SystemExit(str(exc)) from None
        return build_codex(max_app_servers=limit, bounds=bounds)
    target, _, attr = spec.partition(":")
    module = _import_target(spec, target)
    obj: Any = _find_server(module, attr, spec)
    core = getattr(obj, "core", obj)
    if not isinstance(core, ServerCore):
        raise SystemExit(f"--serve {spec}: not a codex_mcp Server or ServerCore")
    return core


SERVE_FORMS = "give builtin, codex, path/to/file.py[:attr] or package.module[:attr]"


def _import_target(spec: str, target: str) -> Any:
    """The module `--serve` names: a file or an importable module; a name that is not
    there is one line saying so (an import failing inside it keeps its traceback)."""
    if target.endswith(".py") or "/" in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise SystemExit(f"--serve {spec}: there is no file {path}; {SERVE_FORMS}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"--serve {spec}: cannot load a server from {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name is None or not (target == error.name or target.startswith(error.name + ".")):
            raise
        raise SystemExit(
            f"--serve {spec}: no module named {error.name!r} (not installed, or not on "
            f"PYTHONPATH); {SERVE_FORMS}"
        ) from None


def _find_server(module: Any, attr: str, spec: str) -> Any:
    if attr:
        obj = getattr(module, attr, None)
        if obj is None:
            raise SystemExit(
                f"--serve {spec}: {module.__name__} has no attribute {attr!r}; name the "
                "Server, ServerCore or a function returning one after the colon"
            )
        return obj() if callable(obj) and not hasattr(obj, "core") else obj
    for name in ("server", "app", "mcp"):
        if hasattr(module, name):
            return getattr(module, name)
    if hasattr(module, "build_server"):
        return module.build_server()
    raise SystemExit(
        f"--serve {spec}: no server found in {module.__name__} (looked for server, app, mcp "
        "and build_server); name it with ':attr'"
    )
