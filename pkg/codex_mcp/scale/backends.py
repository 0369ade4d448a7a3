"""Which Redis a `--redis-url` names, and the clients to reach it: one server
(`redis://`, `rediss://`, `unix://`), the primary that Redis Sentinel names
(`redis+sentinel://`, `rediss+sentinel://`: asked of the sentinels at each new connection,
so a failover is followed without a restart), or a Redis Cluster (`redis+cluster://`,
`rediss+cluster://`: a session's keys share a hash slot, its events travel by sharded
pub/sub). specs/scale.md, "Sentinel and Cluster"."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote

from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError

#: Commands wait this long before the store counts as unreachable.
COMMAND_TIMEOUT: Final = 2.0
#: What a command raises when Redis cannot serve it (a Cluster's own errors are apart).
FAILURES: Final = (RedisError, RedisClusterException, OSError)
#: The usual ports, when a URL's host names none.
SENTINEL_PORT: Final = 26379
REDIS_PORT: Final = 6379

Kind = Literal["single", "sentinel", "cluster"]
FORMS: Final = (
    "redis://[[user]:password@]host:port/db, rediss://..., unix:///path, "
    "redis+sentinel://[[user]:password@]host:port[,host:port...]/SERVICE[/db] "
    "(or rediss+sentinel://), redis+cluster://[[user]:password@]host:port[,host:port...] "
    "(or rediss+cluster://)"
)


@dataclass(frozen=True)
class Target:
    """A `--redis-url`, read: what kind of Redis, where, and as whom."""

    kind: Kind
    url: str
    nodes: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False


def parse_target(url: str) -> Target:
    """The target a URL names; ValueError (saying what is wrong) for one we cannot use."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError("no scheme")
    base, plus, mode = scheme.lower().partition("+")
    if not plus:
        return Target("single", url)  # redis-py reads it (and refuses what it cannot)
    if base not in ("redis", "rediss") or mode not in ("sentinel", "cluster"):
        raise ValueError(f"unknown scheme {scheme!r}")
    authority, _, path = rest.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    nodes = tuple(
        _host_port(h, SENTINEL_PORT if mode == "sentinel" else REDIS_PORT) for h in hosts.split(",")
    )
    parts = [p for p in path.split("/") if p]
    if mode == "cluster":
        if parts:
            raise ValueError("a Redis Cluster has one database: the URL takes no path")
        return Target(
            "cluster", url, nodes, username=username, password=password, tls=base == "rediss"
        )
    if not parts or len(parts) > 2:
        raise ValueError("a Sentinel URL names the service: .../SERVICE or .../SERVICE/DB")
    if len(parts) == 2 and not parts[1].isdigit():
        raise ValueError(f"the database {parts[1]!r} is not a number")
    db = int(parts[1]) if len(parts) == 2 else 0
    return Target(
        "sentinel", url, nodes, unquote(parts[0]), db, username, password, base == "rediss"
    )


def _host_port(text: str, default: int) -> tuple[str, int]:
    if not text:
        raise ValueError("a host is missing")
    if text.startswith("["):  # [::1]:26379
        host, _, tail = text[1:].partition("]")
        port = tail.removeprefix(":")
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if port and not port.isdigit():
        raise ValueError(f"the port {port!r} is not a number")
    return host, int(port) if port else default


class Backend:
    """The clients of one target: `redis` for commands (retried once on a connection found
    closed), and `line(channel)`, a fresh client for one pub/sub connection, never retried
    (it must see a lost connection). `sharded`: session channels use SSUBSCRIBE/SPUBLISH
    on the node owning their slot (a Cluster); `tagged`: a session's keys carry a hash tag."""

    def __init__(self, target: Target, max_connections: int) -> None:
        self.target = target
        self.kind = target.kind
        self.sharded = self.tagged = target.kind == "cluster"
        # Can a write wait for a replica (WAIT on the connection that wrote)? Not through
        # the Cluster client, which sends WAIT to a node of its own choosing.
        self.can_wait = target.kind != "cluster"
        timeouts: dict[str, Any] = {
            "socket_timeout": COMMAND_TIMEOUT,
            "socket_connect_timeout": COMMAND_TIMEOUT,
        }
        # A pooled connection may predate a Redis restart or a failover: the first command
        # on it finds it closed. Once more on a fresh connection, rather than a 503.
        retry = Retry(NoBackoff(), 1, (RedisConnectionError,))
        self._closing: list[Any] = []
        self._lines: dict[str, Redis] = {}
        self.redis: Any
        if target.kind == "single":
            # Blocking: a burst of more concurrent commands than connections waits for one
            # (up to the command timeout) instead of failing, and marking the store down.
            pool = BlockingConnectionPool.from_url(
                target.url, max_connections=max_connections, timeout=COMMAND_TIMEOUT,
                retry=retry, **timeouts,
            )  # fmt: skip
            self.redis = Redis(connection_pool=pool)
            bus_pool = ConnectionPool.from_url(
                target.url, socket_timeout=COMMAND_TIMEOUT * 4,
                socket_connect_timeout=COMMAND_TIMEOUT,
            )  # fmt: skip
            self._closing += [self.redis, pool, bus_pool]
            self._lines[""] = Redis(connection_pool=bus_pool)
            return
        auth: dict[str, Any] = {"username": target.username, "password": target.password}
        if target.kind == "sentinel":
            # The sentinels get no credentials: those of the URL are the data nodes'.
            sentinel = Sentinel(list(target.nodes), sentinel_kwargs=dict(timeouts))
            if target.tls:
                auth["ssl"] = True
            self.redis = sentinel.master_for(
                target.service, db=target.db, retry=retry, **auth, **timeouts
            )
            self._lines[""] = sentinel.master_for(
                target.service, db=target.db, **auth, socket_timeout=COMMAND_TIMEOUT * 4,
                socket_connect_timeout=COMMAND_TIMEOUT,
            )  # fmt: skip
            self._closing += [self.redis, self._lines[""]]
            return
        self.redis = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in target.nodes],
            ssl=target.tls, retry=retry, **auth, **timeouts,
        )  # fmt: skip
        self._closing.append(self.redis)
        self._node_kwargs = {"ssl": target.tls, **auth}

    def line_name(self, channel: str) -> str:
        """Which pub/sub connection holds `channel`: "" (the general one), or in a Cluster
        the node owning a session channel's slot."""
        if not self.sharded or "{" not in channel:
            return ""
        return str(self.redis.get_node_from_key(channel).name)

    def line(self, channel: str) -> Redis:
        """The client of `channel`'s pub/sub connection, as of now (in a Cluster, the node
        owning its slot; the general channels: any node, as PUBLISH reaches every node)."""
        if not self.sharded:
            return self._lines[""]
        node = self.redis.get_node_from_key(channel)
        client = self._lines.get(node.name)
        if client is None:
            client = self._lines[node.name] = Redis(
                host=node.host, port=node.port, socket_timeout=COMMAND_TIMEOUT * 4,
                socket_connect_timeout=COMMAND_TIMEOUT, retry=Retry(NoBackoff(), 0),
                **self._node_kwargs,
            )  # fmt: skip
            self._closing.append(client)
        return client

    async def start(self) -> None:
        """Learn the Cluster's slots, again (raises while it cannot be reached)."""
        if self.kind == "cluster":
            await self.redis.initialize()

    async def fresh_connections(self) -> None:
        """After an outage: a Cluster's idle pooled connections may predate a node's
        restart, and its client retries a command on another pooled one, maybe as stale;
        they reconnect on their next use instead. (One server's and Sentinel's connections
        retry once on a fresh socket by themselves.)"""
        if self.kind == "cluster":
            for node in self.redis.get_nodes():
                await node.disconnect_free_connections()

    async def close(self) -> None:
        for closing in reversed(self._closing):
            with contextlib.suppress(Exception):
                await closing.aclose()


__all__ = ["COMMAND_TIMEOUT", "FAILURES", "FORMS", "Backend", "Target", "parse_target"]
