"""The trust lock is a file someone else may edit (a teammate, a merge, another program): every
hostile shape is one line naming the file and what is wrong, never a traceback, and a
gateway or `codex-mcp trust` that meets one writes nothing over it (specs/trust.md)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from codex_mcp.trust.lock import (
    FORMAT,
    MAX_LOCK_BYTES,
    LockError,
    LockFile,
    LockState,
    Pin,
    render,
    tool_pin,
)

GOOD_PIN = tool_pin("add", {"description": "Adds two numbers.", "inputSchema": {"type": "object"}})


def _good() -> dict[str, Any]:
    state = LockState()
    state.put(state.trusted, "time", "tools", "add", GOOD_PIN)
    document: dict[str, Any] = orjson.loads(render(state))
    return document


def _one_line_error(path: Path) -> str:
    with pytest.raises(LockError) as caught:
        LockFile(path).read()
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message, message
    assert path.name in message, message
    return message


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "not valid JSON"),
        (b"<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n", "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        (b"[]", "not a JSON object"),
        (b"null", "not a JSON object"),
        (b'{"format": "codex-mcp-lock/0"}', "format"),
        (b'{"format": 1}', "format"),
        (orjson.dumps({"format": FORMAT, "extra": 1}), "unknown key"),
        (b'{"format": "codex-mcp-lock/1", "servers": NaN}', "not valid JSON"),
    ],
)
def test_garbage_is_one_line(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "lock.json"
    path.write_bytes(content)
    assert said in _one_line_error(path)


def _at(document: dict[str, Any], place: list[str], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    target = changed
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    return changed


PLACES = [
    ["servers"],
    ["servers", "time"],
    ["servers", "time", "tools"],
    ["servers", "time", "tools", "add"],
    ["servers", "time", "tools", "add", "digest"],
    ["servers", "time", "tools", "add", "definition"],
]
WRONG = [[], "text", 7, 1.5, True, None, {"x": 1}]


@pytest.mark.parametrize("place", PLACES, ids=".".join)
def test_every_wrong_type_at_every_level_is_one_line(tmp_path: Path, place: list[str]) -> None:
    path = tmp_path / "lock.json"
    for wrong in WRONG:
        document = _at(_good(), place, wrong)
        path.write_bytes(orjson.dumps(document))
        try:
            LockFile(path).read()
        except LockError as error:
            assert "\n" not in str(error)
            continue
        # The only wrong values a lock may hold are empty objects where objects go.
        assert wrong == {"x": 1} and place[-1] in ("servers", "time", "tools"), (place, wrong)


def test_an_unknown_kind_and_an_edited_definition_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    document = _good()
    document["servers"]["time"]["prompts"] = {}
    path.write_bytes(orjson.dumps(document))
    assert "not one of tools, skills" in _one_line_error(path)
    document = _good()
    document["servers"]["time"]["tools"]["add"]["definition"]["description"] = "Edited."
    path.write_bytes(orjson.dumps(document))
    assert "its digest is not its definition's" in _one_line_error(path)


def test_names_with_control_characters_stay_one_line(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    document = _good()
    document["servers"]["evil\n\x1b[2Jname"] = {"tools": {"x\u2028y": {"digest": "nope"}}}
    path.write_bytes(orjson.dumps(document))
    message = _one_line_error(path)
    assert "\x1b" not in message and "\u2028" not in message


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    with path.open("wb") as file:
        file.truncate(MAX_LOCK_BYTES + 1)  # sparse: nothing written
    assert "over the limit" in _one_line_error(path)


def test_a_file_nested_100000_deep_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    path.write_bytes(
        b'{"format": "codex-mcp-lock/1", "servers": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    )
    assert "deeper" in _one_line_error(path)
    deep: Any = {}
    for _ in range(200):  # deeper than a lock holds, within what orjson parses
        deep = {"d": deep}
    document = _at(_good(), ["servers", "time", "tools", "add", "definition"], deep)
    path.write_bytes(orjson.dumps(document))
    assert "deeper" in _one_line_error(path)


def test_a_fifo_and_a_folder_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert "not a regular file" in _one_line_error(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    assert "not a regular file" in _one_line_error(folder)


def test_a_corrupt_lock_is_never_written_over(tmp_path: Path) -> None:
    """A writer meets the corrupt file under the lock, and leaves it as it was: a team's pins
    are not replaced by one gateway's."""
    path = tmp_path / "lock.json"
    path.write_bytes(b"<<<<<<< HEAD")
    with pytest.raises(LockError):
        LockFile(path).change(lambda state: state.put(state.trusted, "a", "tools", "b", GOOD_PIN))
    assert path.read_bytes() == b"<<<<<<< HEAD"


def test_a_lock_is_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    lock = LockFile(path)
    other = Pin.of({"name": "add", "description": "Adds two numbers. <IMPORTANT>"})
    lock.change(lambda state: state.put(state.trusted, "time", "tools", "add", GOOD_PIN))
    lock.change(lambda state: state.put(state.pending, "time", "tools", "add", other))
    state = lock.read()
    assert state.get(state.trusted, "time", "tools", "add") == GOOD_PIN
    assert state.get(state.pending, "time", "tools", "add") == other
    text = path.read_text()
    assert text == render(state).decode()  # stable: sorted, indented, one trailing newline
    assert '"description": "Adds two numbers."' in text


def test_a_write_over_the_limit_is_refused_and_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    lock = LockFile(path)
    lock.change(lambda state: state.put(state.trusted, "time", "tools", "add", GOOD_PIN))
    before = path.read_bytes()
    huge = Pin.of({"name": "big", "description": "x" * (MAX_LOCK_BYTES + 10)})
    with pytest.raises(LockError, match="over the limit"):
        lock.change(lambda state: state.put(state.trusted, "time", "tools", "big", huge))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["lock.json"]  # no temporary file left
