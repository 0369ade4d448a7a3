"""Skills served by the server library (SEP-2640; specs/skills.md): from a directory of skill
folders, each with a SKILL.md, or defined in code; every file a `skill://` resource, every
folder a directory resource.

A skill's files are read once, when the server starts, and served from that snapshot: the
digests a listing publishes always match what a read returns, and nothing on disk is
opened again, so a path sent by a client never reaches the file system (reads, gets and
directory reads are lookups of the URIs the snapshot made). Symbolic links are never
followed; a skill that breaks a rule of the format or a limit is left out and said why
(`SkillProvider.problems`, and a warning in the log)."""

from __future__ import annotations

import base64
import logging
import mimetypes
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..core.context import RequestContext
from ..core.jsonrpc import JsonObject
from ..core.provider import Provider, ResourceNotFound
from ..core.skills import (
    DIRECTORY_MIME,
    MAX_RESOURCES_PER_SKILL,
    MAX_SKILL_BYTES,
    SKILL_FILE,
    SKILL_NAME,
    BadFrontmatter,
    NotADirectory,
    UnknownSkill,
    digest,
    parse_frontmatter,
)

log = logging.getLogger("codex_mcp.server.skills")

#: What all skills of one server hold in memory at most (their files are served from it).
DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024
#: How deep a skills directory is walked, and how many entries the walk looks at at most.
MAX_WALK_DEPTH = 16
MAX_WALK_ENTRIES = 100_000
SCHEME = "skill"
_SEGMENT_SAFE = "-._~!$&'()*+,;="


@dataclass
class SkillSource:
    """One skill before it is served: its path in the namespace (`acme/billing/refunds`)
    and its files by relative path (`SKILL.md`, `templates/invoice.md`)."""

    path: str
    files: dict[str, bytes]
    origin: str = "code"


@dataclass
class _Served:
    """One skill as served: its entry and the URIs of its files."""

    entry: JsonObject
    frontmatter: JsonObject
    uris: list[str] = field(default_factory=list)


class SkillProvider(Provider):
    """Serves skills: skills/list, skills/get, resources/directory/read, and the skill
    files through resources/list and resources/read."""

    def __init__(self, *, max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES) -> None:
        super().__init__()
        self.max_total_bytes = max_total_bytes
        self._directories: list[Path] = []
        self._sources: list[SkillSource] = []
        #: Why each skill left out was left out, one line each.
        self.problems: list[str] = []
        self._loaded = False
        self._skills: list[JsonObject] = []
        self._by_uri: dict[str, _Served] = {}
        self._files: dict[str, tuple[bytes, str]] = {}
        self._resources: list[JsonObject] = []
        self._children: dict[str, list[JsonObject]] = {}

    @property
    def features(self) -> frozenset[str]:
        return frozenset({"resources", "skills", "directories"})

    # -- declaring ---------------------------------------------------------------
    def add_directory(self, root: str | os.PathLike[str]) -> None:
        """Serve every skill under `root` (a folder holding a SKILL.md is a skill; its
        path under `root` is its path in the namespace). Read when the server starts."""
        self._directories.append(Path(root))
        self._loaded = False

    def add_skill(
        self,
        name: str,
        description: str,
        instructions: str,
        *,
        files: Mapping[str, str | bytes] | None = None,
        prefix: str = "",
        frontmatter: Mapping[str, Any] | None = None,
    ) -> None:
        """A skill defined in code: SKILL.md is its frontmatter (`name`, `description`
        and `frontmatter`'s other fields) and `instructions`; `files` its other files by
        relative path; `prefix` the folders it sits in (`acme/billing`)."""
        import yaml

        front = {"name": name, "description": description, **(frontmatter or {})}
        text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n"
        contents = {SKILL_FILE: (text + instructions).encode()}
        for relative, data in (files or {}).items():
            contents[relative] = data.encode() if isinstance(data, str) else bytes(data)
        path = "/".join(part for part in (*prefix.split("/"), name) if part)
        self._sources.append(SkillSource(path, contents, origin=f"skill {name!r} (code)"))
        self._loaded = False

    # -- lifetime ----------------------------------------------------------------
    async def start(self) -> None:
        self.load()

    def load(self) -> None:
        """Read the directories and build what is served (idempotent until something is added)."""
        if self._loaded:
            return
        self.problems = []
        sources = list(self._sources)
        held = sum(len(data) for source in sources for data in source.files.values())
        for root in self._directories:
            # What is read from disk stays within what may be held: no more is read.
            found = read_skill_directory(root, self.problems, self.max_total_bytes - held)
            held += sum(len(data) for source in found for data in source.files.values())
            sources.extend(found)
        self._build(sources)
        for problem in self.problems:
            log.warning("%s", problem)
        self._loaded = True

    # -- serving -----------------------------------------------------------------
    async def list_skills(self, ctx: RequestContext) -> Sequence[JsonObject]:
        self.load()
        return self._skills

    async def get_skill(self, uri: str, ctx: RequestContext) -> JsonObject:
        self.load()
        served = self._by_uri.get(uri)
        if served is None:
            raise UnknownSkill(uri)
        return served.entry

    async def read_directory(self, uri: str, ctx: RequestContext) -> Sequence[JsonObject]:
        self.load()
        children = self._children.get(uri)
        if children is None:
            raise NotADirectory(uri)
        return children

    async def list_resources(self, ctx: RequestContext) -> Sequence[JsonObject]:
        self.load()
        return self._resources

    async def read_resource(self, uri: str, ctx: RequestContext) -> list[JsonObject]:
        self.load()
        found = self._files.get(uri)
        if found is None:
            raise ResourceNotFound(uri)
        data, mime = found
        try:
            return [{"uri": uri, "mimeType": mime, "text": data.decode("utf-8")}]
        except UnicodeDecodeError:
            return [{"uri": uri, "mimeType": mime, "blob": base64.b64encode(data).decode()}]

    # -- building ----------------------------------------------------------------
    def _build(self, sources: list[SkillSource]) -> None:
        skills: list[JsonObject] = []
        by_uri: dict[str, _Served] = {}
        files: dict[str, tuple[bytes, str]] = {}
        resources: dict[str, JsonObject] = {}
        directories: dict[str, dict[str, JsonObject]] = {}
        total = 0
        for source in sources:
            served = self._check(source)
            if served is None:
                continue
            size = sum(len(data) for data in source.files.values())
            if total + size > self.max_total_bytes:
                self.problems.append(
                    f"{source.origin}: left out: the skills served would hold more than "
                    f"{self.max_total_bytes} bytes"
                )
                continue
            if served.entry["uri"] in by_uri:
                self.problems.append(
                    f"{source.origin}: left out: {served.entry['uri']} is served already"
                )
                continue
            total += size
            skills.append(served.entry)
            by_uri[served.entry["uri"]] = served
            base = skill_uri(source.path)
            for relative, data in source.files.items():
                uri = f"{base}/{_quote_path(relative)}"
                mime = _mime_of(relative)
                files[uri] = (data, mime)
                resource: JsonObject = {
                    "uri": uri,
                    "name": relative.rsplit("/", 1)[-1],
                    "mimeType": mime,
                    "size": len(data),
                }
                if relative == SKILL_FILE:
                    resource["name"] = served.frontmatter["name"]
                    resource["description"] = served.frontmatter["description"]
                # A nested skill's files belong to its enclosing skill too: its SKILL.md
                # resource describes the nested skill, whichever came first.
                if uri not in resources or relative == SKILL_FILE:
                    resources[uri] = resource
                _add_to_directories(directories, uri, resources[uri])
        for children in directories.values():
            for uri in list(children):
                if uri in resources:
                    children[uri] = resources[uri]
        self._skills = skills
        self._by_uri = by_uri
        self._files = files
        self._resources = list(resources.values())
        self._children = {
            uri: sorted(children.values(), key=lambda child: str(child["uri"]))
            for uri, children in directories.items()
        }

    def _check(self, source: SkillSource) -> _Served | None:
        """The entry of a skill that follows the format and the limits, else None (and
        the problem noted)."""

        def refuse(reason: str) -> None:
            self.problems.append(f"{source.origin}: left out: {reason}")

        segments = source.path.split("/")
        if not source.path or any(not part or part in (".", "..") for part in segments):
            refuse(f"its path {source.path!r} is not a path of folder names")
            return None
        skill_md = source.files.get(SKILL_FILE)
        if skill_md is None:
            refuse("it has no SKILL.md")
            return None
        for relative in source.files:
            parts = relative.split("/")
            if relative.startswith("/") or any(part in ("", ".", "..") for part in parts):
                refuse(f"its file {relative!r} is not a relative path inside the skill")
                return None
        try:
            frontmatter = parse_frontmatter(skill_md.decode("utf-8"))
        except UnicodeDecodeError:
            refuse("its SKILL.md is not UTF-8")
            return None
        except BadFrontmatter as exc:
            refuse(str(exc))
            return None
        name = frontmatter["name"]
        if not SKILL_NAME.match(name):
            refuse(
                f"its name {name!r} breaks the naming rules (lowercase letters, digits, hyphens)"
            )
            return None
        if segments[-1] != name:
            refuse(f"its folder {segments[-1]!r} is not its name {name!r}")
            return None
        if len(source.files) > MAX_RESOURCES_PER_SKILL:
            refuse(f"it has {len(source.files)} files, over {MAX_RESOURCES_PER_SKILL}")
            return None
        size = sum(len(data) for data in source.files.values())
        if size > MAX_SKILL_BYTES:
            refuse(f"its files hold {size} bytes, over {MAX_SKILL_BYTES}")
            return None
        base = skill_uri(source.path)
        uri = f"{base}/{SKILL_FILE}"
        entry: JsonObject = {
            "uri": uri,
            "frontmatter": frontmatter,
            "resources": [
                {"uri": f"{base}/{_quote_path(rel)}", "digest": digest(data), "size": len(data)}
                for rel, data in sorted(source.files.items())
            ],
        }
        return _Served(entry, frontmatter)


def skill_uri(path: str) -> str:
    """`skill://<skill-path>` of a skill's folder (its root directory resource)."""
    return f"{SCHEME}://{_quote_path(path)}"


def _quote_path(path: str) -> str:
    return "/".join(quote(part, safe=_SEGMENT_SAFE) for part in path.split("/"))


def _mime_of(relative: str) -> str:
    if relative.lower().endswith(".md"):
        return "text/markdown"
    guessed, _encoding = mimetypes.guess_type(relative, strict=False)
    return guessed or "application/octet-stream"


def _add_to_directories(
    directories: dict[str, dict[str, JsonObject]], uri: str, resource: JsonObject
) -> None:
    """`uri` (a file) as a child of its folder, and each folder up to the namespace's root
    as a child of its own."""
    parent, _sep, _name = uri.rpartition("/")
    child = resource
    while parent.count("/") >= 2 and parent != f"{SCHEME}:/":
        directories.setdefault(parent, {})[str(child["uri"])] = child
        folder_name = parent.rsplit("/", 1)[-1]
        child = {"uri": parent, "name": folder_name, "mimeType": DIRECTORY_MIME}
        parent = parent.rpartition("/")[0]
        if parent == f"{SCHEME}:/":
            break


def read_skill_directory(
    root: Path, problems: list[str], max_bytes: int = DEFAULT_MAX_TOTAL_BYTES
) -> list[SkillSource]:
    """Every skill under `root`: each folder holding a regular SKILL.md, with every regular
    file under it (nested skills' included). Symbolic links, devices and pipes are skipped;
    no file is read past the per-skill limit, nor past `max_bytes` for all of them (the
    skills past it are left out)."""
    try:
        mode = os.lstat(root).st_mode
    except OSError as exc:
        problems.append(f"skills directory {root}: cannot be read: {exc.strerror}")
        return []
    if not stat.S_ISDIR(mode):
        problems.append(
            f"skills directory {root}: is not a directory (symbolic links are not followed)"
        )
        return []
    tree = _walk(root, problems)
    if SKILL_FILE in tree.get(root, {}):
        problems.append(
            f"skills directory {root}: its own SKILL.md is ignored (skills are its folders)"
        )
    sources = []
    for folder, entries in tree.items():
        if folder == root or SKILL_FILE not in entries:
            continue
        files = _read_skill_files(folder, _files_under(tree, folder), problems, max_bytes)
        if files is not None:
            max_bytes -= sum(len(data) for data in files.values())
            relative = folder.relative_to(root).as_posix()
            sources.append(SkillSource(relative, files, origin=f"skill folder {folder}"))
    return sources


def _read_skill_files(
    folder: Path, paths: list[Path], problems: list[str], left: int
) -> dict[str, bytes] | None:
    """A skill folder's files by relative path, or None (and why) past a limit (the
    skill's, or the `left` bytes all skills may still hold): no more is read than that."""
    files: dict[str, bytes] = {}
    budget = min(MAX_SKILL_BYTES, max(left, 0))
    for path in sorted(paths):
        if len(files) >= MAX_RESOURCES_PER_SKILL:
            problems.append(
                f"skill folder {folder}: left out: over {MAX_RESOURCES_PER_SKILL} files"
            )
            return None
        data = _read_bounded(path, budget, problems)
        if data is None:
            continue
        if len(data) > budget:
            if left < MAX_SKILL_BYTES:
                why = "the skills served would hold more than the server keeps"
            else:
                why = f"its files hold over {MAX_SKILL_BYTES} bytes"
            problems.append(f"skill folder {folder}: left out: {why}")
            return None
        budget -= len(data)
        files[path.relative_to(folder).as_posix()] = data
    return files


def _walk(root: Path, problems: list[str]) -> dict[Path, dict[str, Path]]:
    """Folder -> its regular files by name, for every folder under `root` reached without
    following a symbolic link, within the depth and entry bounds."""
    tree: dict[Path, dict[str, Path]] = {}
    pending = [(root, 0)]
    seen = 0
    while pending:
        folder, depth = pending.pop()
        files: dict[str, Path] = {}
        tree[folder] = files
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_WALK_ENTRIES:
                        problems.append(
                            f"skills directory {root}: walk stopped after {MAX_WALK_ENTRIES} entries"
                        )
                        return tree
                    if entry.is_symlink():
                        problems.append(f"{entry.path}: skipped: a symbolic link")
                    elif entry.is_dir(follow_symlinks=False):
                        if depth + 1 > MAX_WALK_DEPTH:
                            problems.append(f"{entry.path}: skipped: deeper than {MAX_WALK_DEPTH}")
                        else:
                            pending.append((Path(entry.path), depth + 1))
                    elif entry.is_file(follow_symlinks=False):
                        files[entry.name] = Path(entry.path)
        except OSError as exc:
            problems.append(f"{folder}: cannot be read: {exc.strerror}")
    return tree


def _files_under(tree: dict[Path, dict[str, Path]], folder: Path) -> list[Path]:
    return [
        path
        for directory, files in tree.items()
        if directory == folder or folder in directory.parents
        for path in files.values()
    ]


def _read_bounded(path: Path, budget: int, problems: list[str]) -> bytes | None:
    """At most `budget + 1` bytes of a regular file, opened without following a link
    (one swapped in since the walk is refused by the open itself)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        problems.append(f"{path}: skipped: {exc.strerror}")
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            problems.append(f"{path}: skipped: not a regular file")
            return None
        chunks = []
        left = max(budget, 0) + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


__all__ = ["SkillProvider", "SkillSource", "read_skill_directory", "skill_uri"]
