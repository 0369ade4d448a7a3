"""How sessions and events look in Redis: a session's hash fields, and an event as the
append script publishes it."""

from __future__ import annotations

import orjson

from ..transports.http.store import SessionRecord, StoredEvent

#: Every key and channel of ours starts with this.
PREFIX = "codex-mcp:"


def key_of(kind: str, name: str) -> str:
    """`codex-mcp:<kind>:<name>`: a resource's subscribers (sub), a replica's channel
    (node) and heartbeat (alive), a task (t). A session's keys: `Keys`."""
    return f"{PREFIX}{kind}:{name}"


class Keys:
    """Where a session's keys and channel, and the requestState nonces, are. On one Redis
    (and Sentinel): `codex-mcp:<kind>:<sid>`, as always. In a Cluster (`tagged`) the
    session id is a hash tag, `codex-mcp:<kind>:{<sid>}`, so a session's hash (s), events
    (e), counter (q) and channel (ev) share a slot (its scripts and transactions touch
    them together) and sessions spread over the nodes; the nonces and their epoch share
    the slot of the tag `{nonce}`."""

    def __init__(self, tagged: bool) -> None:
        self.tagged = tagged
        self.epoch = f"{PREFIX}{{nonce}}:epoch" if tagged else f"{PREFIX}epoch"

    def session(self, kind: str, session_id: str) -> str:
        return f"{PREFIX}{kind}:{{{session_id}}}" if self.tagged else f"{PREFIX}{kind}:{session_id}"

    def nonce(self, nonce: str) -> str:
        return f"{PREFIX}{{nonce}}:{nonce}" if self.tagged else f"{PREFIX}nonce:{nonce}"


def entry_of(entry_id: bytes | str) -> tuple[int, int]:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, n = text.partition("-")
    return int(ms), int(n)


def parse_published(data: bytes) -> StoredEvent | None:
    """An event as the append script publishes it: `E <entry> <stream> <seq> <final> <data>`."""
    if not data.startswith(b"E "):
        return None
    _, entry, stream, seq, final, payload = data.split(b" ", 5)
    return StoredEvent(entry_of(entry), stream.decode(), int(seq), final == b"1", payload)


def fields_of(record: SessionRecord) -> dict[str, str]:
    return {
        "cred": record.credential or "",
        "v": record.protocol_version or "",
        "info": orjson.dumps(record.client_info).decode(),
        "caps": orjson.dumps(record.client_capabilities).decode(),
        "init": "1" if record.initialized else "0",
        "lvl": str(record.log_threshold),
        "subs": orjson.dumps(record.subscriptions).decode(),
    }


def record_of(fields: dict[str, str]) -> SessionRecord:
    return SessionRecord(
        credential=fields.get("cred") or None,
        protocol_version=fields.get("v") or None,
        client_info=orjson.loads(fields.get("info") or "{}"),
        client_capabilities=orjson.loads(fields.get("caps") or "{}"),
        initialized=fields.get("init") == "1",
        log_threshold=int(fields.get("lvl") or 0),
        subscriptions=list(orjson.loads(fields.get("subs") or "[]")),
    )


__all__ = ["PREFIX", "Keys", "entry_of", "fields_of", "key_of", "parse_published", "record_of"]
