"""Sessions on Redis: what lets any replica serve any request of any session (its keys
and channels, and why nothing here is awaited on a call's hot path: specs/scale.md)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from ..core.jsonrpc import JsonObject
from ..core.request_state import ExpiredRequestState
from ..session_logs import session_label
from ..transports.http.errors import StoreUnavailable
from ..transports.http.store import (
    ClusterHandlers,
    EventCallback,
    NewReader,
    SessionRecord,
    StoredEvent,
)
from .backends import (
    FAILURES,
    FORMS,
    Backend,
    parse_target,
    unfixable,
    without_password,
)
from .bus import Bus
from .records import PREFIX, Keys, entry_of, fields_of, key_of, parse_published, record_of
from .replication import Replication, wait_kinds
from .writer import OrderedWriter

log = logging.getLogger("codex_mcp.scale")

BUS: Final = PREFIX + "bus"
#: Request ids step by this much (see JsonRpcPeer.number_ids): at most 4095 replicas.
STRIDE: Final = 4096
#: For this long after Redis came back, a session it lacks is asked of the other
#: replicas (one holding it stores it again), each time for up to ASK_TIMEOUT.
ASK_WINDOW: Final = 15.0
#: A replica's heartbeat key lives this long (seconds); it is set every second.
HEARTBEAT_TTL: Final = 3
ASK_TIMEOUT: Final = 3.0

# KEYS: the replica counter. ARGV: this replica's number.
_AT_LEAST: Final = """
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end
"""

# KEYS: the epoch, the nonce. ARGV: the nonce's expiry, the earliest its state can have
# been issued (epoch seconds, the issuer's clock less the allowed skew); no ARGV: only make
# sure the epoch is current. Returns 1 (claimed), 0 (claimed before), -1 (issued before the
# epoch).
# The epoch names the Redis process (run_id) holding the nonces, and since when it holds
# them all. A failover puts another process there, which may lack nonces claimed just
# before: its epoch starts when a replica of ours first sees it, and every state issued
# before is refused there, used or not. With no epoch at all (a new Redis, or one that
# restarted empty) nothing can predate the process: its epoch starts when it did.
_CLAIM: Final = """
local info = redis.call('INFO', 'server')
local run_id = string.match(info, 'run_id:(%w+)')
local epoch = redis.call('GET', KEYS[1])
local since
if epoch and string.sub(epoch, 1, #run_id) == run_id then
  since = tonumber(string.sub(epoch, #run_id + 2))
else
  since = tonumber(redis.call('TIME')[1]) + 1
  if not epoch then
    since = since - tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  end
  redis.call('SET', KEYS[1], run_id .. ' ' .. since)
end
if #ARGV == 0 then
  return since
end
if tonumber(ARGV[2]) < since then
  return -1
end
if redis.call('SET', KEYS[2], '1', 'NX', 'EXAT', ARGV[1]) then
  return 1
end
return 0
"""
#: How far the clocks of the replicas and of Redis may disagree (seconds): a state issued
#: this close to its epoch's start is refused too.
CLOCK_SKEW: Final = 0.5


class RedisStore:
    """The SessionStore of replicas that share sessions through Redis."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        replay_events: int,
        session_ttl: float,
        wait: str = "sessions,tasks",
        max_connections: int = 64,
    ) -> None:
        self.url = url
        self.replay_events = max(1, replay_events)
        self.session_ttl = max(1, int(session_ttl))
        kinds = wait_kinds(wait)
        try:
            target = parse_target(url)
            #: The URL as logs and /readyz show it: no password.
            self.shown_url = without_password(url)
            self.backend = Backend(target, max_connections)
        except ValueError as exc:
            raise ValueError(f"--redis-url is not a Redis URL ({exc}); use {FORMS}") from None
        self.keys = Keys(self.backend.tagged)
        #: The kinds of writes that wait for a replica, and the primaries' replicas.
        self.replication = Replication(self.backend, kinds)
        self.redis = self.backend.redis
        self.available = False
        #: Set once this replica is numbered, listening on its channels and beating.
        self._connected = asyncio.Event()
        #: Why the store is not available (what /readyz says).
        self.problem = f"connecting to Redis at {self.shown_url}"
        self._warned = False
        #: Told, with one line to print, of an error retrying cannot fix; the server exits.
        self.on_fatal: Callable[[str], None] = functools.partial(log.error, "%s")
        self.node = 0
        self.stride = STRIDE
        # The bus's own connections, never retried: they must see a lost connection (Redis
        # restarted, perhaps empty, or failed over) to tell their listeners.
        self.bus = Bus(self.backend, self.mark_down)
        self.writer = OrderedWriter(
            self.redis, self.keys, self.replay_events, self.session_ttl, self.mark_down,
            self.replication,
        )  # fmt: skip
        self._monitor: asyncio.Task[None] | None = None
        self._handlers: ClusterHandlers | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._node_listeners: list[Any] = []
        self._claim = self.redis.register_script(_CLAIM)
        #: Sessions this replica asked the others about, after Redis came back.
        self._wanted: dict[str, asyncio.Future[SessionRecord]] = {}
        self._asking_until = 0.0

    # -- lifetime and health ------------------------------------------------------------
    async def start(self, handlers: ClusterHandlers) -> None:
        """Connect in the background: the server listens at once, not ready (503, with the
        reason) until Redis answers; an error retrying cannot fix (the credentials) is
        reported to `on_fatal`."""
        self._handlers = handlers
        self._monitor = asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        """Number this replica, listen on its channels, then watch Redis."""
        delay = 0.25
        await self.bus.start()
        heard: set[str] = set()  # each channel subscribed once, however many tries it takes
        while True:
            try:
                await self.backend.start()
                if not self.node:  # numbered once, however many tries it takes
                    count = await self.redis.incr(PREFIX + "nodes")
                    self.node = 1 + (int(count) - 1) % (STRIDE - 1)
                for channel in (BUS, key_of("node", str(self.node))):
                    if channel not in heard:
                        await self.bus.subscribe(channel, self._on_message)
                        heard.add(channel)
                await self._beat()  # the heartbeat starts before anything runs here
                await self._claim(keys=(self.keys.epoch,))  # an epoch begun at a failover
                break
            except (*FAILURES, TimeoutError) as exc:
                fatal = unfixable(exc, self.shown_url)
                if fatal is not None:
                    self.on_fatal(f"codex-mcp-http: {fatal}")
                    return
                self.mark_down(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        self.available = True
        self._connected.set()
        log.info("sessions on Redis %s as replica %d", self.shown_url, self.node)
        await self._watch()

    async def connected(self) -> None:
        await self._connected.wait()

    async def _beat(self) -> None:
        """The heartbeat; with writes to wait for, also how many replicas each primary has."""
        await self.redis.set(key_of("alive", str(self.node)), b"1", ex=HEARTBEAT_TTL)
        await self.replication.observe()

    async def replica_alive(self, node: int) -> bool:
        """Whether replica `node` beat its heart within HEARTBEAT_TTL."""
        return bool(await self._call(self.redis.exists(key_of("alive", str(node)))))

    async def close(self) -> None:
        if self.available:  # its calls are over: no need to wait for the key to expire
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.redis.delete(key_of("alive", str(self.node))), 1)
        self.writer.close()
        for task in (self._monitor, *self._background):
            if task is not None:
                task.cancel()
        await self.bus.close()
        await self.backend.close()

    def mark_down(self, exc: BaseException) -> None:
        self.problem = f"Redis at {self.shown_url}: {exc}"
        if self.available or not self._warned:
            self._warned = True
            log.error(
                "Redis at %s is unreachable (%s): refusing requests until it is back",
                self.shown_url,
                exc,
            )
        self.available = False

    async def ping(self) -> bool:
        """A heartbeat: this replica's key, alive for HEARTBEAT_TTL (a resumed stream of
        one of its calls ends with an error once the key is gone); doubles as the ping."""
        try:
            await self._beat()
        except FAILURES as exc:
            self.mark_down(exc)
            return False
        if not self.available:
            if not self.bus.connected:
                return False  # not ready until the bus is back too: it carries answers
            await self.backend.fresh_connections()
            log.warning("Redis at %s is reachable again: serving", self.shown_url)
            self.available = True
            self.replication.forget()
            self._asking_until = time.monotonic() + ASK_WINDOW
            self.spawn(self._recovered())
        return True

    async def _recovered(self) -> None:
        """Redis came back, perhaps empty (a restart without persistence): keep new
        replicas' numbers clear of ours, and store again the sessions this one holds."""
        await self.redis.eval(_AT_LEAST, 1, PREFIX + "nodes", self.node)
        await self._claim(keys=(self.keys.epoch,))
        if self._handlers is not None:
            self._handlers.recovered()

    async def _watch(self) -> None:
        """Ping every second while up, four times a second while down."""
        while True:
            await asyncio.sleep(1.0 if self.available else 0.25)
            await self.ping()

    async def _call(self, work: Any) -> Any:
        """Await one command, turning a lost Redis into StoreUnavailable (503)."""
        try:
            return await work
        except FAILURES as exc:
            self.mark_down(exc)
            raise StoreUnavailable(f"the session store (Redis) is unreachable: {exc}") from exc

    def spawn(self, work: Any) -> None:
        """Run a command in the background; a failure marks the store down and is logged."""

        async def run() -> None:
            try:
                await work
            except FAILURES as exc:
                self.mark_down(exc)

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- sessions --------------------------------------------------------------------------
    async def load(self, session_id: str) -> SessionRecord | None:
        fields = await self._call(self.redis.hgetall(self.keys.session("s", session_id)))
        if fields:
            return record_of({k.decode(): v.decode() for k, v in fields.items()})
        if time.monotonic() < self._asking_until:
            # Redis came back (perhaps empty) a moment ago: the replicas holding a session
            # in memory store it again, but maybe not yet. Ask them before saying 404.
            return await self._ask_holders(session_id)
        return None

    async def _ask_holders(self, session_id: str) -> SessionRecord | None:
        """The session's record as a replica holding it stores it again, or None when none
        does within ASK_TIMEOUT (then there is no such session)."""
        wanted = self._wanted.get(session_id)
        if wanted is None:
            log.warning(
                "[session %s] not in Redis, which came back a moment ago: asking the replicas",
                session_label(session_id),
            )
            wanted = self._wanted[session_id] = asyncio.get_running_loop().create_future()
            self.publish(BUS, {"t": "want", "s": session_id, "o": self.node})
        try:
            return await asyncio.wait_for(asyncio.shield(wanted), ASK_TIMEOUT)
        except TimeoutError:
            return None
        finally:
            if self._wanted.get(session_id) is wanted:
                del self._wanted[session_id]

    async def save(
        self,
        session_id: str,
        record: SessionRecord,
        ttl: float,
        unsubscribed: list[str],
        announce: bool = True,
    ) -> None:
        """Store the record (and forget the subscriptions it dropped), and, if `announce`,
        tell the other replicas (their copies follow it): one round trip (in a Cluster,
        one more for the PUBLISH), which a new session's WAIT for a replica ends. Every key
        but the session's hash is another's (the live set, the subscription sets): in a
        Cluster they may be on other nodes, so no script or transaction spans them."""
        hash_key = self.keys.session("s", session_id)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(hash_key, mapping=fields_of(record))
        pipe.expire(hash_key, max(1, int(ttl)))
        if record.initialized:
            pipe.zadd(PREFIX + "live", {session_id: time.time()})
        for uri in record.subscriptions:
            pipe.sadd(key_of("sub", uri), session_id)
        for uri in unsubscribed:
            pipe.srem(key_of("sub", uri), session_id)
        published = []
        if announce:
            state = {"t": "state", "s": session_id, "o": self.node, "r": fields_of(record)}
            published.append((BUS, orjson.dumps(state)))
        # A new session (saved before its id is given out) waits for a replica: a failover
        # right after cannot lose a session its client was told of.
        waits = not announce and self.replication.waits("sessions")
        results, waited = await self._call(self._execute(pipe, published, waits, [hash_key]))
        self.replication.held(results, waited, "session", session_label(session_id))

    async def _execute(
        self,
        pipe: Any,
        published: list[tuple[str, bytes]],
        waits: bool = False,
        written: Sequence[str] = (),
    ) -> tuple[list[Any], int]:
        """Run `pipe` and publish (in a Cluster, where a pipeline cannot: one command more
        each, after the pipeline), then, if it `waits`, WAIT on the primaries of `written`
        (last: their answers are last). Returns the results and how many WAITs ended them."""
        if not self.backend.sharded:
            for channel, message in published:
                pipe.publish(channel, message)
        waited = self.replication.wait_on(pipe, written) if waits else 0
        results: list[Any] = await pipe.execute()
        if self.backend.sharded:
            for channel, message in published:
                await self.redis.publish(channel, message)
        return results, waited

    async def delete(self, session_id: str) -> None:
        """End the session in Redis, its subscriptions included (the record is not loaded
        here to learn them: its hash says), and tell every replica."""
        end = orjson.dumps({"t": "end", "s": session_id, "o": self.node})
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.keys.session("s", session_id), "subs")
        pipe.delete(*(self.keys.session(kind, session_id) for kind in ("s", "e", "q")))
        pipe.zrem(PREFIX + "live", session_id)
        (subs, *_), _ = await self._call(self._execute(pipe, [(BUS, end)]))
        if subs:
            pipe = self.redis.pipeline(transaction=False)
            for uri in orjson.loads(subs):
                pipe.srem(key_of("sub", uri), session_id)
            await self._call(pipe.execute())

    def touch(self, session_id: str, ttl: float, initialized: bool) -> None:
        seconds = max(1, int(ttl))
        pipe = self.redis.pipeline(transaction=False)
        for kind in ("s", "e", "q"):
            pipe.expire(self.keys.session(kind, session_id), seconds)
        if initialized:
            pipe.zadd(PREFIX + "live", {session_id: time.time()})
        self.spawn(pipe.execute())

    async def live_sessions(self, ttl: float) -> list[str]:
        """Initialized sessions touched within `ttl` (older entries are pruned)."""
        live = PREFIX + "live"
        cutoff = time.time() - ttl
        pipe = self.redis.pipeline(transaction=False)
        pipe.zremrangebyscore(live, "-inf", cutoff)
        pipe.zrange(live, 0, -1)
        _, members = await self._call(pipe.execute())
        return [m.decode() for m in members]

    async def subscribers(self, uri: str) -> list[str]:
        members = await self._call(self.redis.smembers(key_of("sub", uri)))
        return [m.decode() for m in members]

    # -- events ------------------------------------------------------------------------------
    def append(self, session_id: str, stream: str, seq: int, data: bytes, final: bool) -> None:
        self.writer.write("append", (session_id, stream, seq, data, final))

    def set_later(self, key: str, value: bytes, ttl_ms: int) -> None:
        """SET, in order with this replica's other writes."""
        self.writer.write("set", (key, value, ttl_ms))

    async def written(self, kind: str = "") -> None:
        """Wait until every write queued so far is stored (raises StoreUnavailable), and,
        when writes of `kind` wait for a replica, held by one."""
        barrier: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.writer.write("barrier", (barrier, kind))
        await barrier

    async def claim_nonce(self, nonce: str, expires_at: float, issued_at: float) -> bool:
        """Accept a requestState nonce once across replicas, and across failovers: False
        for a replay; ExpiredRequestState for a state issued before the Redis process
        holding the nonces took over (it may lack a claim made before: see _CLAIM)."""
        keys = (self.keys.epoch, self.keys.nonce(nonce))
        # Its expiry is rounded up to the second: it was issued after `issued_at` - 1.
        args = (int(expires_at), math.floor(issued_at) - 1 - CLOCK_SKEW)
        claimed = await self._call(self._claim(keys=keys, args=args))
        if claimed == -1:
            raise ExpiredRequestState(
                "it was issued before the session store (Redis) failed over or restarted; "
                "start the request again"
            )
        return bool(claimed)

    async def events(self, session_id: str) -> tuple[list[StoredEvent], int]:
        pipe = self.redis.pipeline(transaction=True)
        pipe.xrange(self.keys.session("e", session_id))
        pipe.get(self.keys.session("q", session_id))
        entries, counter = await self._call(pipe.execute())
        found = [
            StoredEvent(
                entry_of(at), item[b"k"].decode(), int(item[b"s"]), item[b"f"] == b"1", item[b"d"]
            )
            for at, item in entries
        ]
        return found, int(counter or 0)

    async def follow(self, session_id: str, callback: EventCallback) -> _Follow:
        channel = self.keys.session("ev", session_id)

        def listener(data: bytes | None) -> None:
            if data is None:
                callback(None)
                return
            event = parse_published(data)
            if event is not None:
                callback(event)
            elif data.startswith(b"R "):
                callback(NewReader(data[2:].decode()))

        await self._call(self.bus.subscribe(channel, listener))  # TimeoutError is an OSError
        return _Follow(self.bus, channel, listener)

    async def announce_reader(self, session_id: str, token: str) -> None:
        channel, message = self.keys.session("ev", session_id), b"R " + token.encode()
        publish = self.redis.spublish if self.backend.sharded else self.redis.publish
        await self._call(publish(channel, message))

    # -- between replicas -------------------------------------------------------------------
    def send_to(self, node: int, session_id: str, message: JsonObject) -> None:
        body = orjson.dumps({"t": "msg", "s": session_id, "m": message})
        self.writer.write("publish", (key_of("node", str(node)), body))

    def broadcast_cancel(self, session_id: str, request_id: Any) -> None:
        body = orjson.dumps({"t": "cancel", "s": session_id, "r": request_id, "o": self.node})
        self.writer.write("publish", (BUS, body))

    def publish(self, channel: str, message: JsonObject) -> None:
        self.writer.write("publish", (channel, orjson.dumps(message)))

    def add_node_listener(self, listener: Any) -> None:
        """Also hand this replica's own messages of other kinds to `listener(message)`."""
        self._node_listeners.append(listener)

    def _on_message(self, data: bytes | None) -> None:
        """A message on the bus (every replica) or on this replica's own channel."""
        if data is None or self._handlers is None:
            return
        message = orjson.loads(data)
        if message.get("o") == self.node:
            return  # this replica did it already
        kind = message.get("t")
        if kind == "msg":  # sent to this replica's channel only
            self._handlers.deliver(message["s"], message["m"])
        elif kind == "cancel":
            self._handlers.cancel(message["s"], message["r"])
        elif kind == "end":
            self._handlers.ended(message["s"])
        elif kind == "state":
            record = record_of(message["r"])
            wanted = self._wanted.get(message["s"])
            if wanted is not None and not wanted.done():
                wanted.set_result(record)
            self._handlers.state(message["s"], record)
        elif kind == "want":
            self._handlers.wanted(message["s"])
        else:
            for listener in self._node_listeners:
                listener(message)


class _Follow:
    def __init__(self, bus: Bus, channel: str, listener: Any) -> None:
        self._bus, self._channel, self._listener = bus, channel, listener

    def close(self) -> None:
        self._bus.unsubscribe(self._channel, self._listener)


__all__ = ["BUS", "PREFIX", "STRIDE", "RedisStore"]
