"""Sessions on Redis: what lets any replica serve any request of any session (its keys
and channels, and why nothing here is awaited on a call's hot path: specs/scale.md)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import orjson
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from ..core.jsonrpc import JsonObject
from ..session_logs import session_label
from ..transports.http.errors import StoreUnavailable
from ..transports.http.store import (
    ClusterHandlers,
    EventCallback,
    NewReader,
    SessionRecord,
    StoredEvent,
)
from .bus import Bus
from .records import PREFIX, entry_of, fields_of, key_of, parse_published, record_of
from .writer import OrderedWriter

log = logging.getLogger("codex_mcp.scale")

BUS: Final = PREFIX + "bus"
#: Request ids step by this much (see JsonRpcPeer.number_ids): at most 4095 replicas.
STRIDE: Final = 4096
#: Commands wait this long before the store counts as unreachable.
COMMAND_TIMEOUT: Final = 2.0
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


# KEYS: the session's hash, the live set, the bus.
# ARGV: the TTL, the session id, its score in the live set ("": not initialized), the bus
# message whose "r" is the hash's fields, "1" to publish it, our key prefix, and the
# subscriptions the session dropped (a JSON list). Few arguments: packing each costs.
_SAVE: Final = """
local fields = cjson.decode(ARGV[4])['r']
local flat = {}
for name, value in pairs(fields) do
  flat[#flat + 1] = name
  flat[#flat + 1] = value
end
redis.call('HSET', KEYS[1], unpack(flat))
redis.call('EXPIRE', KEYS[1], ARGV[1])
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
end
for _, uri in ipairs(cjson.decode(fields['subs'])) do
  redis.call('SADD', ARGV[6] .. 'sub:' .. uri, ARGV[2])
end
for _, uri in ipairs(cjson.decode(ARGV[7])) do
  redis.call('SREM', ARGV[6] .. 'sub:' .. uri, ARGV[2])
end
if ARGV[5] == '1' then
  redis.call('PUBLISH', KEYS[3], ARGV[4])
end
"""

# KEYS: the session's hash, events, counter; the live set; the bus.
# ARGV: the session id, our key prefix, the bus message.
_DELETE: Final = """
local subs = redis.call('HGET', KEYS[1], 'subs')
if subs then
  for _, uri in ipairs(cjson.decode(subs)) do
    redis.call('SREM', ARGV[2] .. 'sub:' .. uri, ARGV[1])
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('PUBLISH', KEYS[5], ARGV[3])
"""


class RedisStore:
    """The SessionStore of replicas that share sessions through Redis."""

    shared = True

    def __init__(
        self, url: str, *, replay_events: int, session_ttl: float, max_connections: int = 64
    ) -> None:
        self.url = url
        #: The URL as logs and /readyz show it: no password.
        self.shown_url = without_password(url)
        self.replay_events = max(1, replay_events)
        self.session_ttl = max(1, int(session_ttl))
        # Blocking: a burst of more concurrent commands than connections waits for one
        # (up to the command timeout) instead of failing, and marking the store down.
        self.pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=COMMAND_TIMEOUT,
            socket_timeout=COMMAND_TIMEOUT,
            socket_connect_timeout=COMMAND_TIMEOUT,
            # A pooled connection may predate a Redis restart: the first command on it
            # finds it closed. Once more on a fresh connection, rather than a 503 (and a
            # store marked down) while Redis is up.
            retry=Retry(NoBackoff(), 1, (RedisConnectionError,)),
        )
        self.redis = Redis(connection_pool=self.pool)
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
        # The bus's own connection, never retried: it must see a lost connection (Redis
        # restarted, perhaps empty) to tell its listeners and mark the store down.
        self.bus_pool = ConnectionPool.from_url(
            url, socket_timeout=COMMAND_TIMEOUT * 4, socket_connect_timeout=COMMAND_TIMEOUT
        )
        self.bus = Bus(Redis(connection_pool=self.bus_pool), self.mark_down)
        self.writer = OrderedWriter(
            self.redis, self.replay_events, self.session_ttl, self.mark_down
        )
        self._monitor: asyncio.Task[None] | None = None
        self._handlers: ClusterHandlers | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._node_listeners: list[Any] = []
        self._save = self.redis.register_script(_SAVE)
        self._delete = self.redis.register_script(_DELETE)
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
        while True:
            try:
                if not self.node:  # numbered once, however many tries it takes
                    count = await self.redis.incr(PREFIX + "nodes")
                    self.node = 1 + (int(count) - 1) % (STRIDE - 1)
                await self.bus.subscribe(BUS, self._on_message)
                await self.bus.subscribe(key_of("node", str(self.node)), self._on_message)
                break
            except (RedisError, OSError, TimeoutError) as exc:
                if refused_credentials(exc):
                    self.on_fatal(
                        f"codex-mcp-http: Redis at {self.shown_url} refused the credentials "
                        f"of --redis-url ({exc}): fix its user and password"
                    )
                    return
                self.mark_down(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        await self._beat()  # the heartbeat starts before anything runs here
        self.available = True
        self._connected.set()
        log.info("sessions on Redis %s as replica %d", self.shown_url, self.node)
        await self._watch()

    async def connected(self) -> None:
        await self._connected.wait()

    async def _beat(self) -> None:
        await self.redis.set(key_of("alive", str(self.node)), b"1", ex=HEARTBEAT_TTL)

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
        for closing in (self.redis, self.pool, self.bus_pool):
            with contextlib.suppress(Exception):
                await closing.aclose()

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
        except (RedisError, OSError) as exc:
            self.mark_down(exc)
            return False
        if not self.available:
            if not self.bus.connected:
                return False  # not ready until the bus is back too: it carries answers
            log.warning("Redis at %s is reachable again: serving", self.shown_url)
            self.available = True
            self._asking_until = time.monotonic() + ASK_WINDOW
            self.spawn(self._recovered())
        return True

    async def _recovered(self) -> None:
        """Redis came back, perhaps empty (a restart without persistence): keep new
        replicas' numbers clear of ours, and store again the sessions this one holds."""
        await self.redis.eval(_AT_LEAST, 1, PREFIX + "nodes", self.node)
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
        except (RedisError, OSError) as exc:
            self.mark_down(exc)
            raise StoreUnavailable(f"the session store (Redis) is unreachable: {exc}") from exc

    def spawn(self, work: Any) -> None:
        """Run a command in the background; a failure marks the store down and is logged."""

        async def run() -> None:
            try:
                await work
            except (RedisError, OSError) as exc:
                self.mark_down(exc)

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- sessions --------------------------------------------------------------------------
    async def load(self, session_id: str) -> SessionRecord | None:
        fields = await self._call(self.redis.hgetall(key_of("s", session_id)))
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
        tell the other replicas (their copies follow it): one command, one round trip."""
        state = {"t": "state", "s": session_id, "o": self.node, "r": fields_of(record)}
        args = (
            max(1, int(ttl)),
            session_id,
            repr(time.time()) if record.initialized else "",
            orjson.dumps(state),
            "1" if announce else "",
            PREFIX,
            orjson.dumps(unsubscribed),
        )
        keys = (key_of("s", session_id), PREFIX + "live", BUS)
        await self._call(self._save(keys=keys, args=args))

    async def delete(self, session_id: str) -> None:
        """End the session in Redis, its subscriptions included, in one script (the
        record is not loaded here to learn them), and tell every replica."""
        end = orjson.dumps({"t": "end", "s": session_id, "o": self.node})
        keys = [key_of(kind, session_id) for kind in ("s", "e", "q")]
        await self._call(
            self._delete(keys=[*keys, PREFIX + "live", BUS], args=[session_id, PREFIX, end])
        )

    def touch(self, session_id: str, ttl: float, initialized: bool) -> None:
        seconds = max(1, int(ttl))
        pipe = self.redis.pipeline(transaction=False)
        for kind in ("s", "e", "q"):
            pipe.expire(key_of(kind, session_id), seconds)
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

    async def written(self) -> None:
        """Wait until every write queued so far is stored (raises StoreUnavailable)."""
        barrier: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.writer.write("barrier", (barrier,))
        await barrier

    async def events(self, session_id: str) -> tuple[list[StoredEvent], int]:
        pipe = self.redis.pipeline(transaction=True)
        pipe.xrange(key_of("e", session_id))
        pipe.get(key_of("q", session_id))
        entries, counter = await self._call(pipe.execute())
        found = [
            StoredEvent(
                entry_of(at), item[b"k"].decode(), int(item[b"s"]), item[b"f"] == b"1", item[b"d"]
            )
            for at, item in entries
        ]
        return found, int(counter or 0)

    async def follow(self, session_id: str, callback: EventCallback) -> _Follow:
        channel = key_of("ev", session_id)

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
        await self._call(self.redis.publish(key_of("ev", session_id), b"R " + token.encode()))

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


def refused_credentials(exc: BaseException) -> bool:
    """Redis refused the URL's user or password (or wants one): retrying cannot help."""
    if isinstance(exc, ResponseError) and str(exc).startswith(("NOAUTH", "WRONGPASS")):
        return True
    return isinstance(exc, AuthenticationError)


def without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


__all__ = ["BUS", "PREFIX", "STRIDE", "RedisStore"]
