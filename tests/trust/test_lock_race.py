"""Two gateways writing the lock at once lose nothing: each change reads the file again
under the folder's lock before it writes it whole, and a reader meanwhile always sees a whole
file (specs/trust.md, "The lock"; shared/hostile-input.md, "Two at once")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codex_mcp.trust.lock import LockFile

WRITER = Path(__file__).with_name("lock_writer.py")
ROUNDS = 40


def test_two_processes_writing_at_once_keep_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "lock.json"
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), str(path), name, str(ROUNDS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta")
    ]
    try:
        for writer in writers:
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        reads = 0
        lock = LockFile(path)
        while any(writer.poll() is None for writer in writers):
            lock.read()  # never half a file: a LockError here fails the test
            reads += 1
        assert [writer.wait(timeout=60) for writer in writers] == [0, 0]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
    state = LockFile(path).read()
    for name in ("alpha", "beta"):
        assert sorted(state.trusted[name]["tools"]) == sorted(f"t{n}" for n in range(ROUNDS))
    assert reads > 0
    assert [p.name for p in path.parent.iterdir()] == ["lock.json"]  # no temporary left
