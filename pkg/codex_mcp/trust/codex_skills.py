"""Codex's own skills folder, as `codex-mcp skills sync` writes into it (specs/trust.md,
"Skills into Codex").

Codex 0.171 lists every `SKILL.md` at most six folders below `$CODEX_HOME/skills` (dot
folders skipped, linked folders followed, a linked SKILL.md not), by its frontmatter's `name`,
and lists two skills of one name both. So the skills of MCP servers go in a namespace of
their own, `skills/codex-mcp/<server>.<skill path>/`, each named `<server>:<skill path>`
(no skill of the user's is named so, or ours is not written), with a manifest of what was
written there (`.codex-mcp-skills.json`, a dot file Codex never lists).

Nothing here follows a link below the skills folder or writes outside the namespace: every
path is opened from the namespace's descriptor one name at a time (`O_NOFOLLOW`, new files
`O_EXCL`), a skill is written into a fresh dot folder and renamed into place, and a folder
is replaced or removed only when the manifest says it was written here and its files are
still what was written (one edited by hand is left alone). Two syncs at once (a gateway's and
the command's) take turns on an advisory lock of the namespace."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from codex_mcp.core.log_names import printable
from codex_mcp.core.skills import SKILL_FILE
from codex_mcp.gateway.config.json_file import JsonFileError, parse_json
from codex_mcp.gateway.config.load import display_path

NAMESPACE: Final = "codex-mcp"
MANIFEST: Final = ".codex-mcp-skills.json"
MANIFEST_FORMAT: Final = "codex-mcp-skills/1"
MAX_MANIFEST_BYTES: Final = 4 * 1024 * 1024
#: How deep Codex 0.171 looks for a SKILL.md below its skills folder (checked with the CLI).
CODEX_SKILL_DEPTH: Final = 6
#: The longest skill name Codex 0.171 loads (a longer one fails that skill).
CODEX_NAME_CHARS: Final = 64
#: Bounds of a look at the user's own skills (Codex's walk, bounded).
MAX_SCANNED: Final = 10_000
MAX_FRONTMATTER_READ: Final = 64 * 1024
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME_LINE = re.compile(r"^name:\s*['\"]?(.*?)['\"]?\s*$", re.MULTILINE)


class DestinationError(Exception):
    """The skills folder cannot be written as it is (one line: what to do)."""


def codex_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    given = env.get("CODEX_HOME", "").strip()
    return Path(os.path.expanduser(given)) if given else Path.home() / ".codex"


@dataclass(frozen=True, slots=True)
class Bundle:
    """One skill as it is written: where, under which name, and its files (SKILL.md with
    its name already Codex's)."""

    server: str
    path: str
    name: str
    folder: str
    #: The pin's digest: what the server served.
    digest: str
    files: dict[str, bytes]

    @property
    def written(self) -> dict[str, str]:
        return {rel: _sha(data) for rel, data in self.files.items()}


@dataclass(slots=True)
class Report:
    lines: list[str] = field(default_factory=list)
    #: Skills not written (or left alone) for a reason the user should read.
    problems: int = 0

    def say(self, line: str, problem: bool = False) -> None:
        self.lines.append(line)
        self.problems += problem


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class SkillsFolder:
    def __init__(self, home: Path) -> None:
        self.root = home / "skills"
        self.namespace = self.root / NAMESPACE

    @property
    def shown(self) -> str:
        return printable(display_path(self.namespace), 400)

    # -- what is there ---------------------------------------------------------------------
    def _open_namespace(self, create: bool) -> int | None:
        """The namespace's descriptor (None: there is none yet); never through a link. The
        skills folder itself may be one: where it is, is the user's choice."""
        try:
            root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(NAMESPACE, 0o755, dir_fd=root)
            return os.open(NAMESPACE, _OPEN_DIR, dir_fd=root)
        except FileNotFoundError:
            return None
        except OSError:  # ELOOP, ENOTDIR: a link or a file where our folder goes
            raise DestinationError(
                f"{self.shown} is a link or a file, not a folder codex-mcp wrote: nothing "
                "written; move it away to sync"
            ) from None
        finally:
            os.close(root)

    def _manifest(self, space: int) -> dict[str, dict[str, Any]]:
        """folder -> what was written there; DestinationError when the namespace is not ours
        or its manifest is unusable: then nothing in it may be touched."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            descriptor = os.open(MANIFEST, flags, dir_fd=space)
        except FileNotFoundError:
            if os.listdir(space):
                raise DestinationError(
                    f"{self.shown} was not written by codex-mcp (it has no {MANIFEST}): "
                    "nothing written; move it away to sync"
                ) from None
            return {}
        except OSError as error:
            raise self._unusable(error.strerror or str(error)) from None
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MANIFEST_BYTES:
                raise self._unusable(f"not a regular file of at most {MAX_MANIFEST_BYTES} bytes")
            with os.fdopen(os.dup(descriptor), "rb") as file:
                document = parse_json(file.read(MAX_MANIFEST_BYTES + 1), max_depth=8)
        except JsonFileError as error:
            raise self._unusable(str(error)) from None
        finally:
            os.close(descriptor)
        return _entries(document, self._unusable)

    def written(self) -> dict[str, dict[str, Any]]:
        """What the manifest says was written (folder -> entry); none yet: empty."""
        space = self._open_namespace(create=False)
        if space is None:
            return {}
        try:
            return self._manifest(space)
        finally:
            os.close(space)

    def _unusable(self, why: str) -> DestinationError:
        return DestinationError(
            f"{self.shown}/{MANIFEST} is unusable ({printable(why, 200)}): nothing written or "
            "removed; remove the folder to sync afresh"
        )

    def others(self) -> dict[str, str]:
        """Every skill name Codex lists outside our namespace (the user's own, the system's)
        -> where; Codex's walk, bounded."""
        names: dict[str, str] = {}
        seen: set[tuple[int, int]] = set()
        stack: list[tuple[Path, int]] = [(self.root, 0)]
        scanned = 0
        while stack and scanned < MAX_SCANNED:
            folder, depth = stack.pop()
            try:
                entries = list(os.scandir(folder))
                info = os.stat(folder)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:  # a link back up: once
                continue
            seen.add((info.st_dev, info.st_ino))
            for entry in entries:
                scanned += 1
                if entry.name.startswith(".") and not (
                    folder == self.root and entry.name == ".system"
                ):
                    continue
                if folder == self.root and entry.name == NAMESPACE:
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_dir() and depth < CODEX_SKILL_DEPTH:
                        stack.append((Path(entry.path), depth + 1))
                    elif entry.name == SKILL_FILE and entry.is_file(follow_symlinks=False):
                        name = _skill_name(Path(entry.path)) or folder.name
                        names.setdefault(name, entry.path)
        return names

    # -- writing ---------------------------------------------------------------------------
    def sync(
        self, bundles: list[Bundle], keep: set[str], *, keep_servers: set[str], dry_run: bool
    ) -> Report:
        """Write `bundles`, leave the folders in `keep` (and those of the servers in
        `keep_servers`: not listed now) as they are, and remove every other folder the
        manifest lists; what was (or, `dry_run`, would be) done, one line each."""
        report = Report()
        others = self.others()
        if not dry_run:
            self.root.mkdir(parents=True, exist_ok=True)
        space = self._open_namespace(create=not dry_run)
        try:
            if space is not None:
                fcntl.flock(space, fcntl.LOCK_EX)  # another sync meanwhile: ours reads after it
            manifest = self._manifest(space) if space is not None else {}
            kept = keep | {f for f, e in manifest.items() if e.get("server") in keep_servers}
            self._plan(bundles, kept, manifest, others, report, space, write=not dry_run)
            if space is not None and not dry_run:
                data = {"format": MANIFEST_FORMAT, "skills": manifest}
                option = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                _write_file(space, MANIFEST, orjson.dumps(data, option=option))
        finally:
            if space is not None:
                os.close(space)
        return report

    def _plan(
        self,
        bundles: list[Bundle],
        keep: set[str],
        manifest: dict[str, dict[str, Any]],
        others: dict[str, str],
        report: Report,
        space: int | None,
        *,
        write: bool,
    ) -> None:
        """Decide each folder from what is there (`space`, the namespace), and do it when
        `write`."""
        wanted = {bundle.folder for bundle in bundles}
        for bundle in bundles:
            shown = printable(f"{bundle.server}/{bundle.path}", 200)
            if bundle.name in others:
                report.say(
                    f"skipped {shown}: your skill at {printable(others[bundle.name], 300)} is "
                    f"named {bundle.name!r} too; yours stays, this one is not written",
                    True,
                )
                continue
            entry = manifest.get(bundle.folder)
            on_disk = self._files(space, bundle.folder)
            if entry is not None and entry.get("files") == bundle.written:
                report.say(f"unchanged {bundle.name} ({shown})")
                continue
            if entry is None and on_disk is not None:
                report.say(
                    f"skipped {shown}: {bundle.folder} is not a folder codex-mcp wrote; left alone",
                    True,
                )
                continue
            if entry is not None and on_disk not in (None, entry.get("files")):
                report.say(
                    f"skipped {shown}: {bundle.folder} was edited since it was written; left alone",
                    True,
                )
                continue
            verb = "updated" if entry is not None else "wrote"
            if not write:
                verb = "would write" if verb == "wrote" else "would update"
            elif space is not None:
                try:
                    _replace_tree(space, bundle.folder, bundle.files)
                except OSError as error:
                    report.say(f"skipped {shown}: {error.strerror or error}", True)
                    continue
                manifest[bundle.folder] = {
                    "server": bundle.server, "path": bundle.path, "name": bundle.name,
                    "digest": bundle.digest, "files": bundle.written,
                }  # fmt: skip
            report.say(f"{verb} {bundle.name} ({shown}) in {NAMESPACE}/{bundle.folder}")
        for folder in sorted(set(manifest) - wanted - keep):
            entry = manifest[folder]
            on_disk = self._files(space, folder)
            if on_disk is not None and on_disk != entry.get("files"):
                report.say(f"left {folder}: edited since it was written (no longer synced)", True)
            else:
                report.say(
                    f"{'removed' if write else 'would remove'} {entry.get('name', folder)}: no longer served"
                )
            if write and space is not None:
                if on_disk is not None and on_disk == entry.get("files"):
                    shutil.rmtree(folder, dir_fd=space)
                del manifest[folder]

    def _files(self, space: int | None, folder: str) -> dict[str, str] | None:
        """What a folder of the namespace holds (relative path -> digest), or None when
        there is none; a link or anything but files and folders inside counts as an edit."""
        if space is None:
            return None
        try:
            top = os.open(folder, _OPEN_DIR, dir_fd=space)
        except FileNotFoundError:
            return None
        except OSError:
            return {"": "not a folder"}
        found: dict[str, str] = {}
        try:
            for rel, descriptor in _walk(top, ""):
                with os.fdopen(descriptor, "rb") as file:
                    found[rel] = _sha(file.read())
        except OSError:
            found[""] = "not what was written"
        finally:
            os.close(top)
        return found


def _walk(folder: int, prefix: str) -> Iterator[tuple[str, int]]:
    """(relative path, open file) for every file below `folder`, never through a link;
    OSError for anything else (a link, a device)."""
    for name in sorted(os.listdir(folder)):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        rel = f"{prefix}{name}"
        if stat.S_ISDIR(info.st_mode):
            sub = os.open(name, _OPEN_DIR, dir_fd=folder)
            try:
                yield from _walk(sub, rel + "/")
            finally:
                os.close(sub)
        elif stat.S_ISREG(info.st_mode):
            yield rel, os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        else:
            raise OSError(f"{rel} is neither a file nor a folder")


def _replace_tree(space: int, folder: str, files: dict[str, bytes]) -> None:
    """Write `files` into a fresh dot folder, then rename it into place (the old one renamed
    away first, then removed): Codex sees the old skill or the new one, never half."""
    fresh = f".new-{folder}-{secrets.token_hex(4)}"
    os.mkdir(fresh, 0o755, dir_fd=space)
    try:
        top = os.open(fresh, _OPEN_DIR, dir_fd=space)
        try:
            for rel, data in sorted(files.items()):
                *parents, name = rel.split("/")
                _write_file(top, name, data, parents)
        finally:
            os.close(top)
        old = None
        with contextlib.suppress(FileNotFoundError):
            os.stat(folder, dir_fd=space, follow_symlinks=False)
            old = f".old-{folder}-{secrets.token_hex(4)}"
            os.rename(folder, old, src_dir_fd=space, dst_dir_fd=space)
        os.rename(fresh, folder, src_dir_fd=space, dst_dir_fd=space)
        if old is not None:
            shutil.rmtree(old, dir_fd=space)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(fresh, dir_fd=space)
        raise


def _write_file(folder: int, name: str, data: bytes, parents: list[str] | None = None) -> None:
    """`data` as the file `parents/name` below `folder`, each folder made or opened without
    following a link; a new file replaces nothing (`O_EXCL`) but the manifest, renamed over."""
    opened: list[int] = []
    try:
        here = folder
        for part in parents or ():
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=here)
            here = os.open(part, _OPEN_DIR, dir_fd=here)
            opened.append(here)
        target = name if parents is not None else f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(target, flags, 0o644, dir_fd=here), "wb") as file:
            file.write(data)
        if parents is None:  # the manifest: written whole, then renamed over the old one
            os.rename(target, name, src_dir_fd=here, dst_dir_fd=here)
    finally:
        for descriptor in opened:
            os.close(descriptor)


def _skill_name(path: Path) -> str | None:
    """The `name` of a SKILL.md's frontmatter, read as little as Codex needs (bounded)."""
    try:
        with open(path, "rb") as file:
            head = file.read(MAX_FRONTMATTER_READ).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.lstrip("\ufeff").startswith("---"):
        return None
    block = head.split("\n---", 2)[0]
    found = _NAME_LINE.search(block)
    return " ".join(found.group(1).split()) if found else None


def _entries(
    document: Any, unusable: Callable[[str], DestinationError]
) -> dict[str, dict[str, Any]]:
    skills = document.get("skills") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("format") != MANIFEST_FORMAT:
        raise unusable(f"not format {MANIFEST_FORMAT}")
    if not isinstance(skills, dict):
        raise unusable('"skills" is not an object')
    for folder, entry in skills.items():
        files = entry.get("files") if isinstance(entry, dict) else None
        if not _safe_name(folder) or not isinstance(files, dict):
            raise unusable(f"entry {printable(folder, 80)!r} is not one codex-mcp writes")
        if not all(isinstance(value, str) for value in files.values()):
            raise unusable(f"entry {printable(folder, 80)!r} has a digest that is not a string")
    return skills


_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def _safe_name(name: str) -> bool:
    """A folder or file name we write: no separator, no dot start (no `..`), no control."""
    return isinstance(name, str) and _SAFE.fullmatch(name) is not None
