"""A stdio relay that records what passes: `codex_wiretap.py LOG -- command args...`
starts the command, copies stdin to it and its stdout back, and appends every line of
both directions to LOG as `> line` (from the client) or `< line` (from the server), so a
test can see what Codex sent after each of our results (and so whether it accepted it)."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def pump(
    source: IO[bytes], sink: IO[bytes], log: IO[bytes], mark: bytes, lock: threading.Lock
) -> None:
    for line in iter(source.readline, b""):
        with lock:
            log.write(mark + line if line.endswith(b"\n") else mark + line + b"\n")
            log.flush()
        sink.write(line)
        sink.flush()
    sink.close()


def main() -> int:
    log_path, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "ab") as log:
        inbound = threading.Thread(
            target=pump, args=(sys.stdin.buffer, child.stdin, log, b"> ", lock), daemon=True
        )
        inbound.start()
        pump(child.stdout, sys.stdout.buffer, log, b"< ", lock)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
