"""The stdio transport: a subprocess server on stdin/stdout, as Codex launches it (stdout
moved: decision 7; a client that stops reading: decision 34)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

import orjson

from ..core.flow import Flow
from ..core.framing import BadFrame, FrameDecoder, Oversized, encode_frame, sniff_id
from ..core.jsonrpc import INVALID_REQUEST, JsonObject, error_response
from ..core.server import ServerCore
from ..core.session import ServerSession
from ..heap_trim import LARGE_MESSAGE, release_free_memory
from ..settings import DEFAULTS
from .backpressure import compact, shed

log = logging.getLogger("codex_mcp.stdio")


class _Writer(asyncio.Protocol):
    """Write side: buffers in the event loop; pauses reading (stdin, and the core's flow)
    while the peer is slow."""

    def __init__(self, flow: Flow | None = None) -> None:
        self.reader: asyncio.ReadTransport | None = None
        self.drained = asyncio.Event()
        self.drained.set()
        self.paused = False
        self.flow = flow
        #: Called when the pipe drains (the outbound writes what it held).
        self.on_resume: Callable[[], None] | None = None

    def pause_writing(self) -> None:
        self.paused = True
        self.drained.clear()
        if self.reader is not None:
            self.reader.pause_reading()
        if self.flow is not None:
            self.flow.pause()

    def resume_writing(self) -> None:
        self.paused = False
        if self.on_resume is not None:
            self.on_resume()
            if self.paused:  # what it wrote filled the pipe again
                return
        self.drained.set()
        if self.reader is not None and not self.reader.is_closing():
            self.reader.resume_reading()
        if self.flow is not None:
            self.flow.resume()

    def connection_lost(self, exc: Exception | None) -> None:
        self.drained.set()


#: Messages sent in one loop turn past which they are written (and the bound checked).
_FLUSH_EVERY = 1024
#: Held messages go back to the pipe in writes of about this size.
_RELEASE_CHUNK = 256 * 1024
#: What one held message costs beyond its bytes (the bytes object, a deque slot).
_HELD_OVERHEAD = 48


class StdioOutbound:
    """Encodes messages and writes them, coalescing everything sent in one event-loop
    turn into a single write: under load that is one syscall for many responses.

    With a `writer` (a pipe), once more than `bound` bytes wait in the pipe's buffer,
    messages are held here in order, the oldest progress and log notifications shed when
    what is held passes `bound`, and written again as the pipe drains."""

    def __init__(
        self,
        decoder: FrameDecoder,
        write: Any,
        loop: asyncio.AbstractEventLoop,
        *,
        writer: _Writer | None = None,
        buffered: Callable[[], int] | None = None,
        bound: int = DEFAULTS.send_buffer_bytes,
    ) -> None:
        self._decoder = decoder
        self._write = write
        self._loop = loop
        self._pending: list[bytes] = []
        self._writer = writer
        self._buffered = buffered
        self.bound = bound
        self._held: deque[bytes] | None = None  # None: the pipe takes what we send
        self._held_bytes = 0
        self.shed_bytes = 0  # notifications dropped for a client that did not read
        if writer is not None:
            writer.on_resume = self.release

    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        if self._held is not None:
            self._hold(self._encode(message))
            return
        pending = self._pending
        if not pending:
            self._loop.call_soon(self.flush)
        if self._decoder.mode == "lsp":
            pending.append(encode_frame(orjson.dumps(message), "lsp"))
        else:
            pending.append(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))
        if len(pending) >= _FLUSH_EVERY:
            self.flush()  # a task sending without yielding: the bound applies to it too

    def send_apart(self, message: JsonObject) -> None:
        """`message` in a write of its own: what this turn sent before it is written first
        (a debounced list_changed never shares a write with an answer)."""
        if self._held is not None:
            self._hold(self._encode(message))
            return
        self.flush()
        if self._held is not None:  # that write filled the pipe
            self._hold(self._encode(message))
            return
        self._pending.append(self._encode(message))
        self.flush()

    def _encode(self, message: JsonObject | list[JsonObject]) -> bytes:
        """What send() does inline, on its hot path."""
        if self._decoder.mode == "lsp":
            return encode_frame(orjson.dumps(message), "lsp")
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)

    def flush(self) -> None:
        pending = self._pending
        if pending:
            self._pending = []
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            self._write(data)
            if len(data) >= LARGE_MESSAGE:  # what encoding it freed goes back to the OS
                del pending, data
                release_free_memory()
            writer = self._writer
            buffered = self._buffered
            if writer is not None and writer.paused and buffered and buffered() > self.bound:
                self._held = deque()  # the client is not reading: hold, and shed

    def _hold(self, data: bytes) -> None:
        held = self._held
        assert held is not None
        held.append(compact(data))
        self._held_bytes += len(data) + _HELD_OVERHEAD
        if self._held_bytes > self.bound:
            freed = shed(held, _same, self._held_bytes, self.bound, _HELD_OVERHEAD)
            if freed and not self.shed_bytes:
                log.warning(
                    "the client is not reading stdout: dropping its oldest progress and log "
                    "notifications past %d bytes (--send-buffer-bytes)",
                    self.bound,
                )
            self._held_bytes -= freed
            self.shed_bytes += freed

    def release(self) -> None:
        """The pipe drained: write what was held, until it backs up again."""
        held = self._held
        writer = self._writer
        if held is None or writer is None:
            return
        while held and not writer.paused:
            chunk: list[bytes] = []
            size = 0
            while held and size < _RELEASE_CHUNK:
                data = held.popleft()
                chunk.append(data)
                size += len(data)
            self._held_bytes -= size + len(chunk) * _HELD_OVERHEAD
            self._write(b"".join(chunk))
        if not held:
            self._held = None


def _same(data: bytes) -> bytes:
    return data


class _Reader(asyncio.Protocol):
    def __init__(self, decoder: FrameDecoder, session: ServerSession, done: asyncio.Event) -> None:
        self.decoder = decoder
        self.session = session
        self.done = done

    def data_received(self, data: bytes) -> None:
        session = self.session
        for frame in self.decoder.feed(data):
            try:
                if type(frame) is bytes:
                    session.receive_bytes(frame)
                elif isinstance(frame, Oversized):
                    request_id = frame.request_id()
                    log.warning("dropped a message over %d bytes (id %r)", frame.limit, request_id)
                    session.outbound.send(
                        error_response(
                            request_id,
                            INVALID_REQUEST,
                            f"Message too large: the limit is {frame.limit} bytes",
                        )
                    )
                elif isinstance(frame, BadFrame):
                    request_id = sniff_id(frame.head) if frame.head else None
                    log.warning("dropped a bad frame (id %r): %s", request_id, frame.detail)
                    session.outbound.send(
                        error_response(request_id, INVALID_REQUEST, f"Bad frame: {frame.detail}")
                    )
            except Exception:
                # A bug in handling one message must not drop the rest of this read, or
                # leave the decoder mid-frame: it costs that message alone.
                log.exception("failed to handle a message; reading on")

    def eof_received(self) -> bool:
        self.done.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.done.set()


def _take_stdout() -> int:
    """Move the protocol stream off fd 1 and point fd 1 and sys.stdout at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


async def serve_stdio(
    core: ServerCore,
    *,
    max_message_bytes: int = DEFAULTS.max_message_bytes,
    shutdown_timeout: float = DEFAULTS.shutdown_timeout,
    send_buffer_bytes: int = DEFAULTS.send_buffer_bytes,
    stdin_fd: int = 0,
    stdout_fd: int | None = None,
) -> None:
    """Serve one session on stdin/stdout until EOF or SIGTERM/SIGINT, then finish in-flight work."""
    loop = asyncio.get_running_loop()
    out_fd = _take_stdout() if stdout_fd is None else stdout_fd
    decoder = FrameDecoder(max_message_bytes)
    done = asyncio.Event()

    writer = _Writer(core.flow)
    write_transport: asyncio.WriteTransport | None = None
    out_file = os.fdopen(out_fd, "wb", buffering=0, closefd=True)
    if _is_pipe(out_fd):
        write_transport, _ = await loop.connect_write_pipe(lambda: writer, out_file)
        write = write_transport.write
    else:  # a regular file or a tty: event loops can't watch those, so write plainly
        write = _blocking_writer(out_fd)

    outbound = StdioOutbound(
        decoder,
        write,
        loop,
        writer=writer if write_transport is not None else None,
        buffered=write_transport.get_write_buffer_size if write_transport is not None else None,
        bound=send_buffer_bytes,
    )
    await core.start()
    session = core.open_session(outbound)
    reader = _Reader(decoder, session, done)
    in_file = os.fdopen(stdin_fd, "rb", buffering=0, closefd=False)
    read_transport: asyncio.ReadTransport | None = None
    if _is_pipe(stdin_fd):
        read_transport, _ = await loop.connect_read_pipe(lambda: reader, in_file)
        writer.reader = read_transport
    else:
        _start_thread_reader(loop, stdin_fd, reader)

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, done.set)
    try:
        await done.wait()
        log.debug("input closed; finishing %d in-flight request(s)", session.in_flight)
        if read_transport is not None:
            read_transport.close()
        core.end_subscriptions()  # open subscriptions/listen requests are answered, not drained
        await session.drain(shutdown_timeout)
        outbound.flush()
        if write_transport is not None:
            await _flush(write_transport, writer, shutdown_timeout)
    finally:
        await session.aclose()
        await core.aclose()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        if write_transport is not None:
            write_transport.close()


async def _flush(transport: asyncio.WriteTransport, writer: _Writer, timeout: float) -> None:
    """Wait (bounded) until everything written has reached the pipe."""
    writer.reader = None  # reading is over; don't resume it
    transport.set_write_buffer_limits(high=0)  # now "drained" means "empty"
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await writer.drained.wait()


def _is_pipe(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _blocking_writer(fd: int) -> Any:
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]

    return write


def _start_thread_reader(loop: asyncio.AbstractEventLoop, fd: int, reader: _Reader) -> None:
    """For stdin that epoll cannot watch (a regular file): read in a thread."""

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(reader.eof_received)
                return
            loop.call_soon_threadsafe(reader.data_received, chunk)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()


def run_stdio(core: ServerCore, **options: Any) -> None:
    """Blocking entry: run `serve_stdio` on uvloop when installed, else asyncio."""
    from ..launch import run

    run(serve_stdio(core, **options))
