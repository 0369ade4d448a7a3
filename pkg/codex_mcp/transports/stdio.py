"""The stdio transport: a subprocess server on stdin/stdout, as Codex launches it (stdout
moved: decision 7; a client that stops reading: decision 34)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import stat
import sys
import termios
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

import orjson

from ..core.calls import PROGRESS
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
#: How an answer waits for the client to read its call's last progress notification
#: (specs/performance.md, "Progress before the answer"): looking again each loop turn, the
#: CPU yielded in between, for the first `_READ_SPIN` seconds (a client that is waiting
#: reads within tens of microseconds once it runs; a timer is a millisecond at best), then
#: every `_READ_POLL`, at most `_READ_WAIT` in all.
_READ_SPIN = 0.001
_READ_POLL = 0.001
_READ_WAIT = 0.5
#: Requests remembered as having progress the client may not have read; past this many
#: (calls cancelled before their answer leave theirs) the memory starts over.
_PROGRESSED_MAX = 1024


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
        unread: Callable[[], int] | None = None,
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
        #: Bytes written that the client has not read yet (the pipe's and ours), when the
        #: OS can tell; see `_answer_after_progress`.
        self._unread = unread
        #: Requests with a progress notification sent since their last other message.
        self._progressed: set[Hashable] = set()
        #: Messages waiting for the client to read the progress before them; a None marks
        #: where writing stops until the client has read what went before.
        self._after_read: deque[bytes | None] = deque()
        self._after_read_bytes = 0
        self._read_wait: object | None = None  # the chain of looks now running
        if writer is not None:
            writer.on_resume = self.release

    def send(self, message: JsonObject | list[JsonObject], related: Hashable = None) -> None:
        if related is not None and type(message) is dict:
            if message.get("method") == PROGRESS:
                progressed = self._progressed
                if len(progressed) >= _PROGRESSED_MAX:
                    progressed.clear()
                progressed.add(related)
            elif self._progressed and related in self._progressed and "method" not in message:
                # The answer to a request whose progress went before it (a request of ours
                # on its behalf, which also has an id, is not its answer).
                self._progressed.discard(related)
                self._answer_after_progress(message)
                return
        if self._after_read:
            self._queue_after_read(self._encode(message))
            return
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
        data = self._encode(message)
        waiting = self._after_read
        if waiting:  # behind an answer waiting for the client's read: its turn, alone
            waiting.append(None)
            self._queue_after_read(data)
            waiting.append(None)
            return
        if self._held is not None:
            self._hold(data)
            return
        self.flush()
        if self._held is not None:  # that write filled the pipe
            self._hold(data)
            return
        self._pending.append(data)
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

    def _answer_after_progress(self, message: JsonObject) -> None:
        """Send the answer to a call whose progress the client may not have read yet in a
        write of its own, once the client has read that progress.

        The TypeScript SDK dispatches a notification a microtask after it reads it but
        settles a response at once, dropping the call's progress handler: a progress
        notification read in the same chunk as its call's answer is lost. Waiting until
        the pipe is empty puts the answer in a later read."""
        data = self._encode(message)
        waiting = self._after_read
        if waiting:  # behind an earlier answer's wait: this one waits in turn
            waiting.append(None)
            self._queue_after_read(data)
            return
        self.flush()  # the progress, if it is still pending, goes first
        unread = self._unread
        if unread is None or unread() == 0:
            self._pass_on([data])
            return
        waiting.append(None)
        self._queue_after_read(data)
        self._wait_for_read()

    def _wait_for_read(self) -> None:
        """Start looking for the client's read (one chain of looks at a time: an older
        one, outlived by stop_waiting(), stops at its next look)."""
        now = time.monotonic()
        self._read_wait = chain = object()
        self._loop.call_soon(self._poll_read, chain, now + _READ_SPIN, now + _READ_WAIT)

    def _queue_after_read(self, data: bytes) -> None:
        self._after_read.append(data)
        self._after_read_bytes += len(data)
        if self._after_read_bytes > self.bound:  # not read for that long: stop waiting
            self.stop_waiting()

    def _poll_read(self, chain: object, spin_until: float, deadline: float) -> None:
        """Pass on what waits for the client's read, up to the next answer that must wait
        in turn, once the client has read (or after `_READ_WAIT`: then all of it)."""
        waiting = self._after_read
        if chain is not self._read_wait or not waiting:  # stop_waiting() passed it on
            return
        unread = self._unread
        assert unread is not None
        if unread() > 0:
            now = time.monotonic()
            if now < spin_until:
                os.sched_yield()  # the client may be waiting for this CPU to read
                self._loop.call_soon(self._poll_read, chain, spin_until, deadline)
            elif now < deadline:
                self._loop.call_later(_READ_POLL, self._poll_read, chain, spin_until, deadline)
            else:
                self.stop_waiting()
            return
        waiting.popleft()  # the mark of the wait that just ended
        segment: list[bytes] = []
        while waiting and waiting[0] is not None:
            data = waiting.popleft()
            assert data is not None
            segment.append(data)
            self._after_read_bytes -= len(data)
        self._pass_on(segment)
        if waiting:
            self._wait_for_read()

    def _pass_on(self, messages: list[bytes]) -> None:
        """Write encoded messages in one write, or hold them while the pipe is full."""
        if self._held is not None:
            for data in messages:
                self._hold(data)
            return
        self._pending.extend(messages)
        self.flush()

    def stop_waiting(self) -> None:
        """Pass on all that waits for the client's read now (shutting down, or a client
        that does not read)."""
        waiting = self._after_read
        self._read_wait = None
        if waiting:
            self._after_read = deque()
            self._after_read_bytes = 0
            self._pass_on([data for data in waiting if data is not None])

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
        unread=_unread_counter(out_fd, write_transport) if write_transport is not None else None,
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
        outbound.stop_waiting()
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


def _unread_counter(fd: int, transport: asyncio.WriteTransport) -> Callable[[], int] | None:
    """Bytes written to `fd` that its reader has not read, counting what the transport still
    buffers; None where the OS cannot tell. A pipe answers FIONREAD on its write end too; a
    Unix socket (Node spawns its children on socketpairs) answers SIOCOUTQ with what the
    peer has not consumed."""
    is_pipe = stat.S_ISFIFO(os.fstat(fd).st_mode)
    request = termios.FIONREAD if is_pipe else getattr(termios, "TIOCOUTQ", None)
    if request is None:
        return None
    count = bytearray(4)
    try:
        fcntl.ioctl(fd, request, count)
    except OSError:
        return None
    buffered = transport.get_write_buffer_size

    def unread() -> int:
        try:
            fcntl.ioctl(fd, request, count)
        except OSError:  # closed under us: nobody is left to read it
            return 0
        return buffered() + int.from_bytes(count, sys.byteorder)

    return unread


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
