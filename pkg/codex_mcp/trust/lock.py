"""The trust lock (specs/trust.md, "The lock"): per server, each tool's definition and each
skill's digest as first served (`servers`), and what was served since that differs from it,
or is new where nothing new is trusted (`pending`), until `codex-mcp trust` accepts or
rejects it.

One JSON file, sorted and indented so a person reviews it and a team commits it. Written
whole (a temporary file renamed over it), so a reader never sees half of one and needs no
lock; changed only under an advisory lock on its folder, after reading it again, so two
gateways recording at once both keep what they added. Read as a file anyone may have
edited: bounded, type-checked, every problem one line (LockError)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

import orjson

from codex_mcp.codex_compat.definition import json_kind
from codex_mcp.core.jsonrpc import JsonObject
from codex_mcp.core.log_names import printable
from codex_mcp.gateway.config.json_file import JsonFileError, read_json_file
from codex_mcp.gateway.config.load import display_path
from codex_mcp.gateway.config.model import GatewayConfig

FORMAT: Final = "codex-mcp-lock/1"
NOTE: Final = (
    "What codex-mcp trusts of each server: review changes with `codex-mcp trust`, "
    "not by editing (each digest must match its definition)."
)
Kind = Literal["tools", "skills"]
KINDS: Final[tuple[Kind, ...]] = ("tools", "skills")
#: What of a tool's definition reaches the model, and so is pinned.
TOOL_FIELDS: Final = ("title", "description", "inputSchema", "outputSchema", "annotations")
MAX_LOCK_BYTES: Final = 16 * 1024 * 1024
#: A definition as deep as the gateway serves one (128 levels), under the file's own five.
MAX_LOCK_DEPTH: Final = 128 + 6
MAX_NAME_CHARS: Final = 1024
#: Seconds a writer waits for another process holding the lock.
LOCK_TIMEOUT: Final = 10.0
STATE_ENV: Final = "XDG_STATE_HOME"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_LABEL = re.compile(r"[^A-Za-z0-9_.-]+")
_TOP_KEYS: Final = frozenset({"format", "note", "servers", "pending"})


T = TypeVar("T")


class LockError(ValueError):
    """The lock cannot be used or written: one line naming the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class Pin:
    """One item as pinned: the digest compared, and the definition a reviewer reads."""

    digest: str
    definition: JsonObject

    @classmethod
    def of(cls, definition: JsonObject) -> Pin:
        return cls(digest_of(definition), definition)


def digest_of(definition: JsonObject) -> str:
    """`sha256:` of the definition's canonical JSON (keys sorted, no spaces)."""
    return (
        "sha256:"
        + hashlib.sha256(orjson.dumps(definition, option=orjson.OPT_SORT_KEYS)).hexdigest()
    )


def tool_pin(name: str, tool: JsonObject) -> Pin:
    """A tool as served: its own name, and the fields the model reads."""
    definition = {key: tool[key] for key in TOOL_FIELDS if tool.get(key) is not None}
    return Pin.of({"name": name, **definition})


def skill_pin(name: str, entry: JsonObject) -> Pin:
    """A skill as listed: its path, its frontmatter, and each file's digest by its path in
    the skill (a dynamic skill: its frontmatter only, it has no digests)."""
    uri = entry.get("uri")
    root = uri.rsplit("/", 1)[0] + "/" if isinstance(uri, str) else ""
    resources = entry.get("resources")
    files: Any = "dynamic"
    if isinstance(resources, list):
        files = {
            str(item.get("uri", "")).removeprefix(root): item.get("digest")
            for item in resources
            if isinstance(item, dict)
        }
    return Pin.of({"name": name, "frontmatter": entry.get("frontmatter"), "files": files})


#: server -> kind -> item name -> pin.
Section = dict[str, dict[Kind, dict[str, Pin]]]


@dataclass(slots=True)
class LockState:
    trusted: Section = field(default_factory=dict)
    pending: Section = field(default_factory=dict)

    def get(self, section: Section, server: str, kind: Kind, name: str) -> Pin | None:
        return section.get(server, {}).get(kind, {}).get(name)

    def put(self, section: Section, server: str, kind: Kind, name: str, pin: Pin) -> bool:
        """Set it; whether that changed anything."""
        items = section.setdefault(server, {}).setdefault(kind, {})
        if items.get(name) == pin:
            return False
        items[name] = pin
        return True

    def drop(self, section: Section, server: str, kind: Kind, name: str) -> bool:
        items = section.get(server, {}).get(kind, {})
        if items.pop(name, None) is None:
            return False
        if not items:
            del section[server][kind]
            if not section[server]:
                del section[server]
        return True

    @staticmethod
    def items(section: Section) -> Iterator[tuple[str, Kind, str, Pin]]:
        for server, kinds in sorted(section.items()):
            for kind, items in sorted(kinds.items()):
                for name, pin in sorted(items.items()):
                    yield server, kind, name, pin


# -- where it is -----------------------------------------------------------------------------
def state_directory(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/codex-mcp/trust`, else `~/.local/state/codex-mcp/trust` (a relative
    XDG_STATE_HOME is ignored, as the XDG spec says)."""
    env = os.environ if environ is None else environ
    base = env.get(STATE_ENV, "")
    home = env.get("HOME")
    root = (
        Path(base) if base and os.path.isabs(base) else Path(home or Path.home()) / ".local/state"
    )
    return root / "codex-mcp" / "trust"


def lock_path(config: GatewayConfig, environ: Mapping[str, str] | None = None) -> Path:
    """The lock the file names (`gateway.lock_file`), else one of the state directory's:
    one per config file (by its path), or per wrapped command (`codex-mcp -- CMD`)."""
    if config.lock_file is not None:
        return config.lock_file
    if config.path is not None:
        place = config.path.resolve()
        label, key = place.parent.name or "root", str(place)
    else:
        targets = [  # what starts each (no deep copy: a value may be a str subclass of anything)
            {f.name: getattr(server.target, f.name) for f in dataclasses.fields(server.target)}
            for server in config.servers
        ]
        label = config.servers[0].name if config.servers else "none"
        key = json.dumps(targets, sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return state_directory(environ) / f"{_LABEL.sub('_', label)[:40]}-{digest}.json"


#: Whose a lock in the state directory is, when a shell's and Codex's gateway's differ.
SHELLS: Final = "this shell's XDG_STATE_HOME"
CODEX_GATEWAYS: Final = (
    "the one a gateway Codex starts uses: Codex gives its servers no XDG_STATE_HOME"
)


def lock_places(
    config: GatewayConfig, environ: Mapping[str, str] | None = None
) -> list[tuple[Path, str]]:
    """Where gateways of `config` keep its lock, each with whose it is: the one this
    environment names, and when that differs, the one a gateway Codex starts uses (Codex
    clears its servers' environment: XDG_STATE_HOME is not passed on, HOME is)."""
    env = os.environ if environ is None else environ
    here = lock_path(config, env)
    codex = lock_path(config, {key: value for key, value in env.items() if key != STATE_ENV})
    return [(here, "")] if codex == here else [(here, SHELLS), (codex, CODEX_GATEWAYS)]


def existing_locks(
    config: GatewayConfig, environ: Mapping[str, str] | None = None
) -> list[tuple[LockFile, str]]:
    """The locks of `config` that exist (at least one: Codex's gateway's, when none does)."""
    places = lock_places(config, environ)
    found = [(LockFile(path), whose) for path, whose in places if path.exists()]
    return found or [(LockFile(places[-1][0]), places[-1][1])]


# -- the file ------------------------------------------------------------------------------
class LockFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def shown(self) -> str:
        return printable(display_path(self.path), 400)

    def read(self) -> LockState:
        """What it holds now (no file: nothing trusted yet); LockError when it is unusable."""
        try:
            document = read_json_file(self.path, max_bytes=MAX_LOCK_BYTES, max_depth=MAX_LOCK_DEPTH)
            return parse_lock(document)
        except FileNotFoundError:
            return LockState()
        except (JsonFileError, LockError) as error:
            raise LockError(f"{self.shown}: {error}") from None

    def stamp(self) -> tuple[int, int, int] | None:
        """What tells a change of the file (its inode, size and time), None when absent."""
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_ino, info.st_size, info.st_mtime_ns

    def change(self, edit: Callable[[LockState], bool]) -> LockState:
        """Read it again under the lock of its folder, let `edit` change what it holds
        (returning whether it did), and write it whole if so; what it holds after."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with _folder_locked(self.path.parent, self.shown):
                state = self.read()
                if edit(state):
                    self._write(render(state))
                return state
        except OSError as error:
            raise LockError(f"{self.shown}: not written: {error.strerror or error}") from None

    def _write(self, data: bytes) -> None:
        if len(data) > MAX_LOCK_BYTES:
            raise LockError(
                f"{self.shown}: not written: it would be {len(data)} bytes, over the limit "
                f"of {MAX_LOCK_BYTES}"
            )
        try:  # a reviewed, committed file: keep the mode it has; a new one is readable
            mode = os.stat(self.path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        descriptor, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            # Not fsynced: the end of a process keeps it; a crash of the machine may leave a
            # torn file, which is refused and so withholds everything (fails closed).
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
            os.chmod(temporary, mode)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


async def run_apart(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a thread of its own that ends with it: a gateway's event loop is
    never blocked on the lock's folder, and no idle pool thread stays behind (one left by
    `asyncio.to_thread` cost the relayed call ~0.5k instructions, one call at a time: the
    bench in specs/trust.md). Not a daemon: a process that ends waits for the write."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result = work(*args)
        except BaseException as error:  # handed to the waiter, not lost in the thread
            loop.call_soon_threadsafe(settle, None, error)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, name="codex-mcp trust").start()
    return await done


@contextlib.contextmanager
def _folder_locked(folder: Path, shown: str) -> Iterator[None]:
    """An advisory lock (flock) on the lock's folder, held while it is read again and
    written: no file beside it to commit or clean, released by the kernel if we die."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockError(
                        f"{shown}: another process has held its folder's lock for "
                        f"{LOCK_TIMEOUT:.0f} s; try again"
                    ) from None
                time.sleep(0.01)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def render(state: LockState) -> bytes:
    """The file's text: stable (sorted, indented), so a change is a readable diff."""
    document: JsonObject = {"format": FORMAT, "note": NOTE, "servers": _section_json(state.trusted)}
    if state.pending:
        document["pending"] = _section_json(state.pending)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def _section_json(section: Section) -> JsonObject:
    return {
        server: {
            kind: {
                name: {"digest": pin.digest, "definition": pin.definition}
                for name, pin in items.items()
            }
            for kind, items in kinds.items()
        }
        for server, kinds in section.items()
    }


def parse_lock(document: Any) -> LockState:
    """A decoded lock, every value type-checked where it is read (LockError: where, what)."""
    if not isinstance(document, dict):
        raise LockError(f"not a JSON object but {json_kind(document)}")
    if document.get("format") != FORMAT:
        raise LockError(f"format {printable(document.get('format'), 60)!r}, not {FORMAT!r}")
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise LockError(f"unknown key {printable(unknown[0], 60)!r}")
    return LockState(
        _parse_section(document.get("servers", {}), "servers"),
        _parse_section(document.get("pending", {}), "pending"),
    )


def _parse_section(value: Any, where: str) -> Section:
    section: Section = {}
    for server, kinds in _object(value, where).items():
        at = _at(where, server)
        for kind, items in _object(kinds, at).items():
            if kind not in KINDS:
                raise LockError(f"{_at(at, kind)}: not one of {', '.join(KINDS)}")
            pins: dict[str, Pin] = {}
            for name, entry in _object(items, _at(at, kind)).items():
                pins[name] = _pin(entry, _at(at, kind, name))
            section.setdefault(server, {})[kind] = pins
    return section


def _pin(entry: Any, where: str) -> Pin:
    entry = _object(entry, where, named=False)
    digest, definition = entry.get("digest"), entry.get("definition")
    if set(entry) != {"digest", "definition"}:
        raise LockError(f"{where}: expected exactly digest and definition")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise LockError(f"{where}.digest: not sha256: and 64 hex digits")
    if not isinstance(definition, dict):
        raise LockError(f"{where}.definition: not an object but {json_kind(definition)}")
    if digest_of(definition) != digest:
        raise LockError(
            f"{where}: its digest is not its definition's (edited by hand? review changes "
            "with `codex-mcp trust`)"
        )
    return Pin(digest, definition)


def _object(value: Any, where: str, named: bool = True) -> dict[str, Any]:
    """An object, whose keys are names (of servers, kinds, items) when `named`."""
    if not isinstance(value, dict):
        raise LockError(f"{where}: not an object but {json_kind(value)}")
    for key in value if named else ():
        if not key or len(key) > MAX_NAME_CHARS:
            raise LockError(f"{where}: a name is empty or over {MAX_NAME_CHARS} characters")
    return value


def _at(where: str, *names: str) -> str:
    return ".".join([where, *(printable(name, 80) for name in names)])
