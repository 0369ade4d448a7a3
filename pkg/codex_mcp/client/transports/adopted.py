"""A server process started before the event loop ran, behind the part of
`asyncio.subprocess.Process` the stdio transport uses (specs/client.md, "Transports")."""

from __future__ import annotations

import asyncio
import os
import subprocess


class AdoptedProcess:
    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader,
    ) -> None:
        self._popen = popen
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr: asyncio.StreamReader | None = stderr
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def send_signal(self, sig: int) -> None:
        if self._popen.returncode is None:
            self._popen.send_signal(sig)

    def _watch_exit(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self._popen.pid)
        except OSError:
            # pidfd_open refused (a seccomp profile, an old kernel, a tracer): a thread waits
            # instead, so the loop never blocks on a child that is still running.
            waiting = loop.run_in_executor(None, self._popen.wait)
            waiting.add_done_callback(self._waited)
            return

        def exited() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            if not self._exited.done():
                self._exited.set_result(self._popen.wait())

        loop.add_reader(pidfd, exited)

    def _waited(self, waiting: asyncio.Future[int]) -> None:
        if not self._exited.done():
            self._exited.set_result(waiting.result())


async def adopt(
    popen: subprocess.Popen[bytes], limit: int, stdout: asyncio.Protocol | None = None
) -> AdoptedProcess:
    """Wrap a process started with stdin, stdout and stderr pipes; `stdout`, when given,
    is the protocol its stdout is read with (then `process.stdout` is None)."""
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    loop = asyncio.get_running_loop()
    readers: list[asyncio.StreamReader | None] = []
    for pipe in (popen.stdout, popen.stderr):
        if pipe is popen.stdout and stdout is not None:
            await loop.connect_read_pipe(lambda: stdout, pipe)
            readers.append(None)
            continue
        reader = asyncio.StreamReader(limit=limit, loop=loop)
        await loop.connect_read_pipe(lambda r=reader: asyncio.StreamReaderProtocol(r), pipe)  # type: ignore[misc]
        readers.append(reader)
    assert readers[1] is not None
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin,
        popen.stdin,
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    process = AdoptedProcess(popen, writer, readers[0], readers[1])
    process._watch_exit()
    return process
