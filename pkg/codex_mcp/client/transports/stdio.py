"""stdio transport: the server is a subprocess speaking JSON-RPC on its stdin/stdout
(specs/client.md, "Transports")."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TextIO, cast

import orjson

from codex_mcp.core import jsonrpc
from codex_mcp.core.errors import McpError
from codex_mcp.core.framing import BadFrame, FrameDecoder, Oversized
from codex_mcp.core.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonObject
from codex_mcp.heap_trim import LARGE_MESSAGE, release_free_memory
from codex_mcp.settings import DEFAULTS

from ..errors import ConnectionClosed, SpawnError
from .adopted import AdoptedProcess, adopt
from .base import OnClosed, OnMessage, Transport

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger("codex_mcp.client.stdio")

Framing = Literal["ndjson", "content-length"]
_STDERR_TAIL = 20
_STDERR_LINE = 4096  # longer stderr lines are cut (a flood with no newline must not pile up)
_READ_CHUNK = 256 * 1024  # also the pipe reader's buffer: past twice this it stops reading
_WRITE_HIGH_WATER = 1024 * 1024  # past this much unwritten, a sender waits for the pipe


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The process's protocol: stdout goes to `on_stdout` as it is read, not into a
    StreamReader for a task to wake up and copy out; stderr and the exit as asyncio's."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_stdout: Callable[[bytes], None],
        on_stdout_end: Callable[[Exception | None], None],
    ) -> None:
        super().__init__(limit=_READ_CHUNK, loop=loop)
        self._on_stdout = on_stdout
        self._on_stdout_end = on_stdout_end

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd == 1:
            self._on_stdout(data)  # type: ignore[arg-type]
        else:
            super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            self._on_stdout_end(exc)


class _StdoutPipe(asyncio.Protocol):
    """An adopted process's stdout, read the same way (adopted.py)."""

    def __init__(
        self, on_stdout: Callable[[bytes], None], on_end: Callable[[Exception | None], None]
    ) -> None:
        self.on_stdout = on_stdout
        self.on_end = on_end
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        self.on_stdout(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end(exc)


class StdioTransport(Transport):
    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        framing: Framing = "ndjson",
        errlog: TextIO | None = None,
        shutdown_timeout: float = 2.0,
        preexec_fn: Callable[[], object] | None = None,
        max_message_bytes: int = DEFAULTS.max_message_bytes,
        limit_setting: str = "max_message_bytes",
        started: subprocess.Popen[bytes] | None = None,
    ) -> None:
        """`preexec_fn` runs in the child between fork and exec (the gateway uses it to have
        the kernel kill the child when we die). A message over `max_message_bytes` is
        dropped; `limit_setting` is how the user raises it, for the error. `started` is
        this command already running (with pipes for stdin, stdout and stderr), to use
        instead of starting it (adopted.py)."""
        if not command:
            raise ValueError("empty server command")
        self.command = list(command)
        self.env = ({**os.environ} if inherit_env else {}) | dict(env or {})
        self.cwd = cwd
        self.framing: Framing = framing
        self.errlog = errlog
        self.shutdown_timeout = shutdown_timeout
        self.preexec_fn = preexec_fn
        self.max_message_bytes = max_message_bytes
        self.limit_setting = limit_setting
        #: Awaited (when it returns something) before each read of the server's stdout: a
        #: relay reads no faster than it can pass the messages on.
        self.read_gate: Callable[[], Awaitable[object] | None] | None = None
        self.started = started
        self.process: asyncio.subprocess.Process | AdoptedProcess | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self._tasks: list[asyncio.Task[None]] = []
        self._pending: list[bytes] = []
        #: More than _WRITE_HIGH_WATER was left unwritten at the last write.
        self._backed_up = False
        self._on_message: OnMessage | None = None
        self._on_closed: OnClosed | None = None
        self._closing = False
        self._garbage_seen = False
        self._cut: str | None = None  # why we stopped reading a server still running
        self._gone: ConnectionClosed | None = None
        self._stdout: asyncio.ReadTransport | None = None
        self._loop: asyncio.AbstractEventLoop  # set by start(), before anything is sent
        self._decoder: FrameDecoder  # set by start(): the server's stdout
        self._stdin: asyncio.WriteTransport | None = None  # the server's stdin, once started

    def describe(self) -> str:
        return " ".join(self.command)

    async def start(self, on_message: OnMessage, on_closed: OnClosed) -> None:
        self._on_message, self._on_closed = on_message, on_closed
        self._loop = loop = asyncio.get_running_loop()
        self._decoder = FrameDecoder(self.max_message_bytes)
        on_stdout = self._stdout_data
        started, self.started = self.started, None
        try:
            if started is not None:
                stdout = _StdoutPipe(on_stdout, self._stdout_end)
                self.process = await adopt(started, _READ_CHUNK, stdout)
                self._stdout = stdout.transport
            else:
                transport, made = await loop.subprocess_exec(
                    lambda: _Protocol(loop, on_stdout, self._stdout_end),
                    *self.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=self.env,
                    cwd=self.cwd,
                    start_new_session=True,  # our Ctrl-C is not the server's; we stop it ourselves
                    preexec_fn=self.preexec_fn,
                )
                self.process = asyncio.subprocess.Process(transport, made, loop)
                self._stdout = cast(asyncio.ReadTransport, transport.get_pipe_transport(1))
        except FileNotFoundError:
            raise SpawnError(
                f"cannot start MCP server: command not found: {self.command[0]}"
            ) from None
        except PermissionError:
            raise SpawnError(
                f"cannot start MCP server: permission denied: {self.command[0]}"
            ) from None
        assert self.process.stdin is not None
        self._stdin = self.process.stdin.transport  # written to directly, once per loop turn
        self._tasks = [
            loop.create_task(self._read_stderr()),
            loop.create_task(self._watch_exit()),
        ]

    # -- writing ---------------------------------------------------------------
    async def send(self, message: JsonObject) -> None:
        waiting = self.send_nowait(message)
        if waiting is not None:
            await waiting

    def send_nowait(self, message: JsonObject, related: object = None) -> Awaitable[None] | None:
        """Queue one message; everything sent in one event-loop turn goes out in one write
        (under load that is one syscall for many requests). Returns something to await only
        while the pipe is backed up. A failed write is reported by the process's death,
        which fails every pending request. (`related` is the peer's routing hint, which a
        pipe has no use for: this is the session's outbound as it is.)"""
        process = self.process
        if self._gone is not None:
            raise self._gone
        if process is None or process.stdin is None:
            raise ConnectionClosed("stdio transport not started")
        if self.framing == "content-length":
            body = jsonrpc.encode(message)
            data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        else:
            data = orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
        pending = self._pending
        pending.append(data)
        if len(pending) == 1:
            self._loop.call_soon(self._flush)  # (3.11's get_running_loop costs a getpid())
        if self._backed_up and process.stdin.transport.get_write_buffer_size() > _WRITE_HIGH_WATER:
            return self._drain(process.stdin)
        return None

    async def _drain(self, writer: asyncio.StreamWriter) -> None:
        try:
            await writer.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            raise self._gone or ConnectionClosed(f"cannot write to MCP server: {exc}") from None

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        stdin = self._stdin
        if not pending or stdin is None:
            return
        try:
            stdin.write(pending[0] if len(pending) == 1 else b"".join(pending))
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            log.debug("writing to %s failed: %s", self.describe(), exc)
            return
        # Checked once per write, not per message: only a write can fill the pipe's buffer.
        self._backed_up = stdin.get_write_buffer_size() > _WRITE_HIGH_WATER

    # -- reading ---------------------------------------------------------------
    def _stdout_data(self, chunk: bytes) -> None:
        """What the server wrote, as the pipe hands it over (no reader task to wake): every
        message it completes is delivered at once, so under load one read hands over many
        answers. While the read gate says wait, the pipe is not read."""
        for frame in self._decoder.feed(chunk):
            try:
                if type(frame) is bytes:
                    large = len(frame) >= LARGE_MESSAGE
                    if large:  # the chunks it was read in are free now
                        release_free_memory()
                    try:  # _deliver, inline: this runs for every message of a relay
                        message = orjson.loads(frame)
                    except orjson.JSONDecodeError:
                        self._deliver(frame)  # says what it could not read
                        continue
                    del frame  # a large answer's line is not kept while it is relayed
                    if self._on_message is not None:
                        self._on_message(message)
                    if large:  # its line, parse and result are free now
                        del message
                        release_free_memory()
                elif isinstance(frame, Oversized):
                    self._oversized(frame)
                elif isinstance(frame, BadFrame):
                    self._say_once("dropped a bad frame from %s: %s", frame.detail)
            except Exception:  # a bug in handling one message costs that message alone
                log.exception("handling a message from %s failed", self.describe())
        gate = self.read_gate() if self.read_gate is not None else None
        if gate is not None and self._stdout is not None:
            self._stdout.pause_reading()
            self._tasks.append(asyncio.get_running_loop().create_task(self._resume(gate)))

    async def _resume(self, gate: Awaitable[object]) -> None:
        await gate
        if self._stdout is not None and not self._stdout.is_closing():
            self._stdout.resume_reading()

    def _stdout_end(self, exc: Exception | None) -> None:
        """The server's stdout closed (or could not be read): the connection is over."""
        if exc is not None:
            self._cut = f"reading its stdout failed: {exc}"
            log.warning("reading from %s failed: %s", self.describe(), exc)
        self._tasks.append(asyncio.get_running_loop().create_task(self._connection_lost()))

    def _deliver(self, data: bytes) -> None:
        try:
            message = jsonrpc.decode(data)
        except McpError:
            # Servers that print banners on stdout: say so (once), keep going.
            self._say_once("ignoring non-JSON output from %s: %.200r", data)
            return
        if self._on_message is not None:
            self._on_message(message)

    def _say_once(self, text: str, detail: object) -> None:
        level = logging.DEBUG if self._garbage_seen else logging.WARNING
        self._garbage_seen = True
        log.log(level, text, self.describe(), detail)

    def _oversized(self, frame: Oversized) -> None:
        """A message over the limit was dropped: the request it answered fails with an error
        that names the limit, and a request from the server is refused."""
        request_id = frame.request_id()
        limit = frame.limit
        log.warning(
            "dropped a message over %d bytes from %s (id %r); raise %s to accept it",
            limit,
            self.describe(),
            request_id,
            self.limit_setting,
        )
        if request_id is None:
            return
        if frame.kind() == "request":
            with contextlib.suppress(ConnectionClosed):
                self.send_nowait(
                    jsonrpc.error_response(
                        request_id,
                        INVALID_REQUEST,
                        f"Message too large: the limit is {limit} bytes",
                    )
                )
            return
        error = {
            "code": INTERNAL_ERROR,
            "message": f"the answer was over the {limit}-byte limit for one message and was "
            f"dropped (raise {self.limit_setting})",
            "data": {"retryable": False, "type": "message_too_large", "limit": limit},
        }
        if self._on_message is not None:
            self._on_message({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def _read_stderr(self) -> None:
        """Read the server's stderr to its end (a server blocked on a full stderr pipe would
        hang), line by line, cutting lines over _STDERR_LINE so a flood costs no memory."""
        assert self.process is not None and self.process.stderr is not None
        stderr = self.process.stderr
        partial = b""
        while chunk := await stderr.read(65536):
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            if len(partial) > _STDERR_LINE:
                lines.append(partial)
                partial = b""
            for line in lines:
                self._stderr_line(line)
        if partial:
            self._stderr_line(partial)

    def _stderr_line(self, line: bytes) -> None:
        text = line[:_STDERR_LINE].decode("utf-8", errors="replace").rstrip()
        self._stderr_tail.append(text)
        log.debug("[%s] %s", self.command[0], text)
        if self.errlog is not None:
            print(text, file=self.errlog, flush=True)

    @property
    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr."""
        return "\n".join(self._stderr_tail)

    async def _watch_exit(self) -> None:
        assert self.process is not None
        await self.process.wait()
        # A grandchild may still hold stdout open: do not wait for EOF beyond a moment.
        await asyncio.sleep(0.1)
        await self._connection_lost()

    async def _connection_lost(self) -> None:
        if self._gone is not None:
            return
        process = self.process
        code = None
        if process is not None:
            with contextlib.suppress(TimeoutError):
                code = await asyncio.wait_for(process.wait(), 0.5)
        if self._gone is not None:
            return
        if self._closing:
            self._gone = ConnectionClosed("client closed the connection")
        else:
            self._gone = ConnectionClosed(self._death_message(code))
        if self._on_closed is not None:
            self._on_closed(self._gone)

    def _death_message(self, code: int | None) -> str:
        if self._cut is not None:
            what = f"was disconnected ({self._cut})"
        elif code is None:
            what = "closed its stdout"
        elif code < 0:
            try:
                what = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"was killed by signal {-code}"
        else:
            what = f"exited with code {code}"
        message = f"MCP server ({self.describe()}) {what}"
        tail = [line for line in self._stderr_tail if line.strip()]
        if tail:
            message += "; its stderr ended with:\n  " + "\n  ".join(tail[-5:])
        return message

    # -- shutdown --------------------------------------------------------------
    async def close(self) -> None:
        """The spec's shutdown: close stdin, then SIGTERM, then SIGKILL, each after a wait."""
        if self._closing:
            return
        self._closing = True
        self._flush()
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            for step in (None, signal.SIGTERM, signal.SIGKILL):
                if step is not None:
                    with contextlib.suppress(ProcessLookupError):
                        process.send_signal(step)
                try:
                    await asyncio.wait_for(process.wait(), self.shutdown_timeout)
                    break
                except TimeoutError:
                    continue
        await self._connection_lost()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if process is not None and process.stdin is not None:
            process.stdin.close()
