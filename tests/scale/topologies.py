"""Redis the way operators run it, on loopback ports, started with the package's own
binaries (redis-server and redis-cli, or valkey-server and valkey-cli): a Cluster
(`--cluster-enabled`, then `<cli> --cluster create`) and a primary with a replica under
three sentinels (`<server> --sentinel`). Each has RedisServer's shape
(`url`, `stop`, `start`, `kill`) so the scale tests run on it unchanged."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from scale_setup import CLIS, SERVERS, RedisServer
from support.polling import until_sync
from support.processes import free_port, wait_for_port


class ClusterServer:
    """`size` primaries (each with `replicas` replicas) in one Cluster. A restart keeps the
    topology (each node's nodes.conf) and loses the data, as a restarted cache does."""

    def __init__(
        self, root: Path, binary: str, size: int = 3, replicas: int = 0, args: tuple[str, ...] = ()
    ) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.size, self.replicas = size, replicas
        self.nodes: list[RedisServer] = []
        for _ in range(size * (1 + replicas)):
            port = free_port()
            conf = str(root / f"nodes-{port}.conf")
            # The bus port too: the default, port + 10000, may be past 65535 or taken.
            cluster = ("--cluster-enabled", "yes", "--cluster-config-file", conf)
            cluster += ("--cluster-port", str(free_port()))
            # A node that misses answering for this long is failing (the cluster refuses
            # commands meanwhile): 1 s flapped on a loaded 2-core machine.
            timing = ("--cluster-node-timeout", "5000", "--dir", str(root))
            timing += ("--repl-diskless-sync-delay", "0")  # a replica syncs at once
            self.nodes.append(RedisServer(*cluster, *timing, *args, port=port, binary=binary))
        cli = CLIS[binary]
        assert cli is not None, f"no client for {binary}"
        addresses = [f"127.0.0.1:{n.port}" for n in self.nodes]
        create = [cli, "--cluster", "create", *addresses, "--cluster-replicas", str(replicas)]
        subprocess.run([*create, "--cluster-yes"], check=True, capture_output=True, timeout=60)
        self.url = "redis+cluster://" + ",".join(addresses)
        self._wait_ok()

    def _wait_ok(self) -> None:
        until_sync(
            lambda: all("cluster_state:ok" in n.cli("cluster", "info") for n in self.nodes),
            30,
            "the cluster reporting cluster_state:ok on every node",
        )
        until_sync(
            lambda: (
                sum("master_link_status:up" in n.cli("info", "replication") for n in self.nodes)
                == self.size * self.replicas
            ),
            30,
            "every replica in sync with its primary",
        )

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def kill(self) -> None:
        for node in self.nodes:
            node.kill()

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        self._wait_ok()

    def keys(self) -> dict[int, list[str]]:
        """Every key, by the port of the node holding it."""
        return {n.port: n.cli("--scan").split() for n in self.nodes}


#: Sentinel's settings for the tests: a primary is down after 1 s without an answer.
SENTINEL_CONF = """
port {port}
bind 127.0.0.1
protected-mode no
daemonize no
dir {dir}
sentinel monitor codex 127.0.0.1 {primary} 2
sentinel down-after-milliseconds codex 1000
sentinel failover-timeout codex 10000
sentinel parallel-syncs codex 1
{auth}"""


class SentinelGroup:
    """A primary, its replica, and three sentinels watching them as service `codex`; with
    `password` the data nodes require it, with `sentinel_password` the sentinels require
    theirs (each its own `requirepass`, which they also use with each other)."""

    def __init__(
        self,
        root: Path,
        binary: str,
        password: str | None = None,
        sentinel_password: str | None = None,
    ) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.binary = binary
        self.sentinel_password = sentinel_password
        here: tuple[str, ...] = ("--dir", str(root))  # a full sync writes an RDB file there
        auth = ""
        if password:
            here += ("--requirepass", password, "--masterauth", password)
            auth += f"sentinel auth-pass codex {password}\n"
        if sentinel_password:
            auth += f"requirepass {sentinel_password}\n"
        self.primary = RedisServer(*here, binary=binary)
        self.replica = RedisServer(
            *here, "--replicaof", "127.0.0.1", str(self.primary.port), binary=binary
        )
        self.servers = [self.primary, self.replica]
        self.sentinels: list[tuple[int, subprocess.Popen[bytes]]] = []
        for index in range(3):
            port = free_port()
            conf = root / f"sentinel-{index}.conf"  # sentinel rewrites it: its own file
            conf.write_text(
                SENTINEL_CONF.format(port=port, dir=root, primary=self.primary.port, auth=auth)
            )
            process = subprocess.Popen(
                [binary, str(conf), "--sentinel"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_for_port(port, process, "sentinel")
            self.sentinels.append((port, process))
        self.url = (
            "redis+sentinel://"
            + ",".join(f"127.0.0.1:{port}" for port, _ in self.sentinels)
            + "/codex/0"
        )
        until_sync(self._settled, 30, "the replica in sync and known to three sentinels")

    def _ask(self, port: int, *args: str) -> str:
        auth = ("-a", self.sentinel_password) if self.sentinel_password else ()
        cli = CLIS[self.binary]
        assert cli is not None
        done = subprocess.run(
            [cli, "--no-auth-warning", "-h", "127.0.0.1", "-p", str(port), *auth, *args],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        return done.stdout

    def _settled(self) -> bool:
        synced = "master_link_status:up" in self.replica.cli("info", "replication")
        return synced and all(
            self._ask(port, "sentinel", "replicas", "codex").strip()
            and "num-other-sentinels\n2" in self._ask(port, "sentinel", "master", "codex")
            for port, _ in self.sentinels
        )

    def primary_port(self) -> int:
        """The primary's port, as the sentinels name it now."""
        answer = self._ask(self.sentinels[0][0], "sentinel", "get-master-addr-by-name", "codex")
        return int(answer.split()[1])

    def current(self) -> RedisServer:
        port = self.primary_port()
        return next(s for s in self.servers if s.port == port)

    def stop(self) -> None:
        for _, process in self.sentinels:
            process.terminate()
        for _, process in self.sentinels:
            process.wait(10)
        for server in self.servers:
            server.stop()


#: The Clusters the tests run on: Redis's and Valkey's, each with its own binaries.
CLUSTERS: Final = ("cluster", "valkey-cluster")
#: The backends of the Redis-backed scale tests: one Redis, one Valkey, and the Clusters.
EVERY: Final = ("redis", "valkey", *CLUSTERS)
#: Those with one server's URL (for tests that read its keys, or take its URL apart).
ONE_SERVER: Final = ("redis", "valkey")


def server_of(name: str) -> str | None:
    """The server binary of a backend (`valkey-cluster`: valkey-server), if installed."""
    return SERVERS["valkey" if name.startswith("valkey") else "redis"]


def backend_params(*names: str) -> list[Any]:
    """pytest params over the backends, each skipped where its binary is missing."""
    params = []
    for name in names:
        binary = server_of(name)
        there = binary and (name not in CLUSTERS or CLIS.get(binary))  # and its cli
        why = f"{name}: its server or cli is not installed (scripts/setup.sh installs them)"
        marks = [] if there else [pytest.mark.skip(why)]
        if name in CLUSTERS:
            marks.append(pytest.mark.slow)  # three nodes and `--cluster create`: ~2.5 s
        params.append(pytest.param(name, id=name, marks=marks))
    return params


@contextlib.contextmanager
def backend(
    name: str, root: Path, *args: str, replicas: int = 0
) -> Iterator[RedisServer | ClusterServer]:
    """The backend `name` (more server options in `args`; a Cluster's primaries each with
    `replicas` replicas), stopped after."""
    binary = server_of(name)
    assert binary is not None
    server: RedisServer | ClusterServer
    if name in CLUSTERS:
        server = ClusterServer(root / name, binary, replicas=replicas, args=args)
    else:
        server = RedisServer(*args, binary=binary)
    try:
        yield server
    finally:
        server.stop()
