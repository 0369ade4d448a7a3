"""Which Redis a `--redis-url` names, and the clients to reach it: one server
(`redis://`, `rediss://`, `unix://`), the primary that Redis Sentinel names
(`redis+sentinel://`, `rediss+sentinel://`: asked of the sentinels at each new connection,
so a failover is followed without a restart; `?sentinel_password=` theirs), or a Redis
Cluster (`redis+cluster://`, `rediss+cluster://`: a session's keys share a hash slot, its
events travel by sharded pub/sub). specs/scale.md, "Sentinel and Cluster"."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote

from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisClusterException, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

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
    "redis+sentinel://[[user]:password@]host:port[,host:port...]/SERVICE[/db]"
    "[?sentinel_password=...] (or rediss+sentinel://), redis+cluster://[[user]:password@]host:port[,host:port...] "
    "(or rediss+cluster://)"
)


#: Bounds of what a URL may name: its length, and how many hosts it lists.
MAX_URL: Final = 4096
MAX_HOSTS: Final = 64
#: The options a Sentinel URL takes: the sentinels' own credentials (the userinfo is the
#: data nodes'), as Prefect's and Redis-Sentinel-Url's URLs name them.
SENTINEL_OPTIONS: Final = ("sentinel_username", "sentinel_password")
_HOST_NAME: Final = re.compile(r"[A-Za-z0-9._-]+")


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
    sentinel_username: str | None = None
    sentinel_password: str | None = None


def parse_target(url: str) -> Target:
    """The target a URL names; ValueError (saying what is wrong, never quoting the URL,
    which may hold a password) for one we cannot use."""
    if len(url) > MAX_URL:
        raise ValueError(f"longer than {MAX_URL} characters")
    if not (url.isascii() and url.isprintable()) or " " in url:
        raise ValueError("a space, a control character or non-ASCII (percent-encode it)")
    if "#" in url:
        raise ValueError("a '#' (in a password, percent-encode it as %23)")
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError("no scheme")
    userinfo, hosts, path, query = _split(rest)
    base, plus, mode = scheme.lower().partition("+")
    if not plus:
        return Target("single", url)  # redis-py reads the rest (and refuses what it cannot)
    if base not in ("redis", "rediss") or mode not in ("sentinel", "cluster"):
        raise ValueError(f"unknown scheme {scheme!r}")
    username = password = None
    if userinfo is not None:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    nodes = _nodes(hosts, SENTINEL_PORT if mode == "sentinel" else REDIS_PORT)
    parts = path.split("/") if path else []
    tls = base == "rediss"
    if mode == "cluster":
        if any(parts) or query:
            raise ValueError("a Redis Cluster URL takes no path (one database) and no option")
        return Target("cluster", url, nodes, username=username, password=password, tls=tls)
    if len(parts) > 2:
        raise ValueError("a Sentinel URL names the service: .../SERVICE or .../SERVICE/DB")
    service = unquote(parts[0]) if parts else ""
    if not service.isprintable() or not service.strip() or " " in service:
        raise ValueError("the service (.../SERVICE) is missing, blank or not printable")
    db = parts[1] if len(parts) == 2 else "0"
    if not db.isdigit() or len(db) > 10 or int(db) >= 2**31:
        raise ValueError("the database (.../SERVICE/DB) is not a number Redis takes")
    options = _options(query)
    return Target(
        "sentinel", url, nodes, service, int(db), username, password, tls,
        options.get("sentinel_username"), options.get("sentinel_password"),
    )  # fmt: skip


def _split(rest: str) -> tuple[str | None, str, str, str]:
    """userinfo (None: none), hosts, path, query. The userinfo ends at the last '@' before
    the query, so a password may hold a raw '@'; a raw '/' or '?' in it is refused (redis-py
    would read the host and port from the password: its text would be shown as theirs)."""
    head, _, query = rest.partition("?")
    userinfo, at, tail = head.rpartition("@")
    if "/" in userinfo or "@" in query.partition("=")[0]:
        raise ValueError("a '/' or '?' in the user or password (percent-encode: %2F, %3F)")
    hosts, _, path = tail.partition("/")
    return (userinfo if at else None), hosts, path, query


def _options(query: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in query.split("&") if query else ():
        name, _, value = item.partition("=")
        if name not in SENTINEL_OPTIONS or not value or name in options:
            raise ValueError(
                "an option other than sentinel_username= and sentinel_password=, "
                "or one of them empty or given twice"
            )
        options[name] = unquote(value)  # RFC 3986: a '+' is a plus
    return options


def _nodes(hosts: str, default: int) -> tuple[tuple[str, int], ...]:
    listed = hosts.split(",")
    if len(listed) > MAX_HOSTS:
        raise ValueError(f"more than {MAX_HOSTS} hosts")
    nodes: list[tuple[str, int]] = []
    for number, text in enumerate(listed, 1):
        node = _host_port(text, default, f"host {number}")
        if node in nodes:
            raise ValueError(f"host {number} is given twice")
        nodes.append(node)
    return tuple(nodes)


def _host_port(text: str, default: int, which: str) -> tuple[str, int]:
    """`host[:port]` or `[IPv6]:port`: the host as compared (lower case, an IPv6 address
    compressed), and the port (1-65535)."""
    if text.startswith("["):  # [::1]:26379
        inside, closed, tail = text[1:].partition("]")
        try:
            host = str(ipaddress.IPv6Address(unquote(inside))) if closed else ""
        except ValueError:
            host = ""
        if not host or (tail and not tail.startswith(":")):
            raise ValueError(f"{which} is not an IPv6 address in brackets ([::1]:26379)")
        port = tail[1:] if tail else None
    else:
        host, colon, port_text = text.partition(":")
        if ":" in port_text:
            raise ValueError(f"{which}: an IPv6 address goes in brackets ([::1]:26379)")
        if not host or not _HOST_NAME.fullmatch(host):
            raise ValueError(f"{which} is missing or not a host name")
        host, port = host.lower(), port_text if colon else None
    if port is None:
        return host, default
    if not port.isdigit() or len(port) > 5 or not 0 < int(port) < 65536:
        raise ValueError(f"{which}'s port is not a number from 1 to 65535")
    return host, int(port)


class SentinelsRefused(AuthenticationError):
    """No sentinel answered, and some refused the URL's sentinel_username/password."""


class Unsupported(RedisError):
    """A Redis we cannot run on (a Cluster of Redis 6): the server stops, saying why."""


def _replicas_in(role: Any) -> int:
    return len(role[2]) if role and role[0] in (b"master", "master") else 0


def refused_credentials(exc: BaseException) -> bool:
    """Redis refused the URL's user or password (or wants one): retrying cannot help."""
    if isinstance(exc, ResponseError) and str(exc).startswith(("NOAUTH", "WRONGPASS")):
        return True
    return isinstance(exc, AuthenticationError)


def unfixable(exc: BaseException, shown_url: str) -> str | None:
    """What to say of an error retrying cannot fix (the server stops), or None."""
    if isinstance(exc, Unsupported):
        return str(exc)
    if isinstance(exc, SentinelsRefused):
        return (
            f"the sentinels of {shown_url} refused their credentials ({exc}): fix --redis-url's "
            "sentinel_password= (and sentinel_username=); its user and password are the data "
            "nodes'"
        )
    if refused_credentials(exc):
        return f"Redis at {shown_url} refused the credentials of --redis-url ({exc}): fix its user and password"
    return None


def without_password(url: str) -> str:
    """The URL as logs and /readyz show it: its password, and every option whose name says
    password (redis-py's `?password=`, `sentinel_password=`), as `***` (read as
    parse_target reads it, which has refused what could be read otherwise)."""
    scheme, sep, rest = url.partition("://")
    head, question, query = rest.partition("?")
    userinfo, at, tail = head.rpartition("@")
    if at and ":" in userinfo:
        head = userinfo.partition(":")[0] + ":***@" + tail
    items = (item.partition("=") for item in query.split("&"))
    query = "&".join(
        f"{name}{equals}***" if "password" in name.lower() else f"{name}{equals}{value}"
        for name, equals, value in items
    )
    return scheme + sep + head + question + query


class Backend:
    """The clients of one target: `redis` for commands (retried once on a connection found
    closed), and `line(channel)`, a fresh client for one pub/sub connection, never retried
    (it must see a lost connection). `sharded`: session channels use SSUBSCRIBE/SPUBLISH
    on the node owning their slot (a Cluster); `tagged`: a session's keys carry a hash tag."""

    def __init__(self, target: Target, max_connections: int) -> None:
        self.target = target
        self.kind = target.kind
        self.sharded = self.tagged = target.kind == "cluster"
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
            # The URL's user and password are the data nodes'; the sentinels' are its options.
            asked = {"username": target.sentinel_username, "password": target.sentinel_password}
            sentinel = Sentinel(list(target.nodes), sentinel_kwargs={**timeouts, **asked})
            self._sentinels: list[Redis] = sentinel.sentinels
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
        self._checked = False  # sharded pub/sub, once

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
        """Learn the Cluster's slots, again (raises while it cannot be reached; Unsupported
        for a Cluster without sharded pub/sub); make sure the sentinels take their
        credentials (SentinelsRefused when none does)."""
        if self.kind == "cluster":
            await self.redis.initialize()
            if not self._checked:
                await self._sharded_pubsub()
                self._checked = True
        elif self.kind == "sentinel":
            await self._sentinels_accept()

    async def _sharded_pubsub(self) -> None:
        """A session's events travel by SPUBLISH (Redis 7 and later, Valkey): a primary
        without it (Redis 6) is refused at start rather than failing every append. Each
        primary is asked to SPUBLISH on a channel of its own slots (no one listens)."""
        for node in self.redis.get_primaries():
            channels = (f"codex-mcp:probe:{{{n}}}" for n in range(1000))
            mine = (c for c in channels if self.redis.get_node_from_key(c).name == node.name)
            channel = next(mine, None)  # None: the node serves no slot
            try:
                if channel is not None:
                    await self.redis.spublish(channel, b"")
            except ResponseError as exc:
                if "unknown command" not in str(exc):
                    raise
                info = await self.redis.execute_command("INFO", "server", target_nodes=node)
                valkey = info.get("valkey_version")
                runs = f"Valkey {valkey}" if valkey else f"Redis {info.get('redis_version')}"
                raise Unsupported(
                    f"the Redis Cluster node {node.name} runs {runs} without sharded pub/sub "
                    "(SPUBLISH), by which a Cluster's session events travel: use Redis 7 or "
                    "later, or Valkey; or this Redis through Sentinel or as one server"
                ) from None

    async def replica_counts(self) -> dict[str, int]:
        """How many replicas each primary has now (ROLE), by node name ("": the one)."""
        if self.kind != "cluster":
            return {"": _replicas_in(await self.redis.execute_command("ROLE"))}
        nodes = self.redis.get_primaries()
        roles = await asyncio.gather(
            *(self.redis.execute_command("ROLE", target_nodes=node) for node in nodes)
        )
        return {node.name: _replicas_in(role) for node, role in zip(nodes, roles, strict=True)}

    def queue_waits(
        self, pipe: Any, keys: Sequence[str], replicated: Callable[[str], bool], timeout_ms: int
    ) -> int:
        """Append `WAIT 1 timeout_ms` to `pipe` for each primary that takes one of `keys`
        and is `replicated`, on the connection that writes them: one server's and
        Sentinel's pipeline is one connection; a Cluster's sends each node's commands on
        one connection of that node, and a WAIT named for that node after them (the
        Cluster client would send a plain WAIT to a node of its own choosing)."""
        if self.kind != "cluster":
            if not keys or not replicated(""):
                return 0
            pipe.wait(1, timeout_ms)
            return 1
        nodes = {node.name: node for node in map(self.redis.get_node_from_key, keys)}
        waited = [node for name, node in nodes.items() if replicated(name)]
        for node in waited:
            pipe.execute_command("WAIT", 1, timeout_ms, target_nodes=node)
        return len(waited)

    async def _sentinels_accept(self) -> None:
        """redis-py's discovery counts a sentinel refusing the credentials as one that did
        not answer: the store would wait for ever, unready. Each is asked once here."""
        refusals: dict[str, list[str]] = {}  # what was said: by whom
        for client, (host, port) in zip(self._sentinels, self.target.nodes, strict=True):
            try:
                await client.ping()
                return
            except FAILURES as exc:
                if refused_credentials(exc):  # else down, or starting: discovery says so
                    refusals.setdefault(str(exc), []).append(f"{host}:{port}")
        if refusals:
            raise SentinelsRefused(
                "; ".join(f"{', '.join(by)}: {said}" for said, by in refusals.items())
            )

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


__all__ = [
    "COMMAND_TIMEOUT", "FAILURES", "FORMS", "Backend", "SentinelsRefused", "Target", "Unsupported",
    "parse_target", "unfixable", "without_password",
]  # fmt: skip
