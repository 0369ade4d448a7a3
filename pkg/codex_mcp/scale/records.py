"""How sessions and events look in Redis: a session's hash fields, and an event as the
append script publishes it."""

from __future__ import annotations

import orjson

from ..transports.http.store import SessionRecord, StoredEvent

#: Every key and channel of ours starts with this.
PREFIX = "codex-mcp:"


def key_of(kind: str, name: str) -> str:
    """`codex-mcp:<kind>:<name>`: a session's hash (s), events (e), counter (q) and
    channel (ev), a resource's subscribers (sub), a replica's channel (node) and heartbeat
    (alive), a task (t), a requestState nonce (nonce)."""
    return f"{PREFIX}{kind}:{name}"


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


__all__ = ["PREFIX", "entry_of", "fields_of", "key_of", "parse_published", "record_of"]
