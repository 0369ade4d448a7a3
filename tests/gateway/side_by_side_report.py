"""The capability report of tests/gateway/test_side_by_side.py: what one client session
sees of one child, directly or through the gateway, as plain JSON keyed by capability, with
the gateway's renaming (`server__tool`, `scheme://server/...`) undone so that the direct
and the gateway's reports compare field for field."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from codex_mcp.client import Client, McpError

from .gateway_helpers import until

JsonObject = dict[str, Any]
V2025 = "2025-11-25"
V2026 = "2026-07-28"
ROOTS = [{"uri": "file:///side/by/side", "name": "side"}]
ELICITED = {"color": "blue", "number": 7, "pets": "cats", "username": "ada", "email": "a@b.c"}
TERMINAL = ("completed", "failed", "cancelled")
UPDATE_WAIT = 15  # seconds; server-everything sends its subscribers' updates every 5 s


@dataclass(frozen=True)
class Child:
    """One real child and the calls that exercise each capability it has."""

    key: str  # its name in the gateway's config (the tools' prefix)
    command: list[str]
    text: tuple[str, JsonObject]
    structured: tuple[str, JsonObject]
    image: tuple[str, JsonObject]
    resource: tuple[str, JsonObject]
    progress: tuple[str, JsonObject]
    log: tuple[str, JsonObject] | None  # a tool that logs during its call
    elicit: tuple[str, JsonObject]
    sample: tuple[str, JsonObject]
    roots: tuple[str, JsonObject]
    prompt: tuple[str, dict[str, str]]
    completion: tuple[JsonObject, str, str]
    read: str
    subscribe: tuple[str, tuple[str, JsonObject]]  # a URI, and the call that updates it
    task: tuple[str, JsonObject] | None = None  # a tool with taskSupport "required"


@dataclass
class Seen:
    """What the client's callbacks saw during one report."""

    elicitations: list[JsonObject] = field(default_factory=list)
    samplings: list[JsonObject] = field(default_factory=list)
    logs: list[JsonObject] = field(default_factory=list)
    notifications: list[tuple[str, JsonObject]] = field(default_factory=list)

    def elicit(self, params: JsonObject, _ctx: Any) -> JsonObject:
        self.elicitations.append(params)
        properties = params.get("requestedSchema", {}).get("properties", {})
        return {
            "action": "accept",
            "content": {k: ELICITED[k] for k in properties if k in ELICITED},
        }

    def sample(self, params: JsonObject, _ctx: Any) -> JsonObject:
        self.samplings.append(params)
        text = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"sampled: {text}"},
            "model": "side-by-side",
            "stopReason": "endTurn",
        }

    def notify(self, method: str, params: JsonObject) -> None:
        self.notifications.append((method, params))


def client_options(seen: Seen) -> JsonObject:
    return {
        "elicitation_handler": seen.elicit,
        "sampling_handler": seen.sample,
        "roots": ROOTS,
        "logging_handler": seen.logs.append,
        "on_notification": seen.notify,
        "timeout": 60,
    }


def sanitized(name: str) -> str:
    """A name as the gateway's naming keeps it (specs/gateway.md, "Names")."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


@dataclass(frozen=True)
class Naming:
    """The gateway's names for one child's tools, prompts and URIs (none when direct)."""

    prefix: str | None

    def name(self, raw: str) -> str:
        if self.prefix is None:
            return raw
        return f"{self.prefix}__{sanitized(raw)}"

    def uri(self, raw: str) -> str:
        if self.prefix is None or "://" not in raw:
            return raw
        scheme, rest = raw.split("://", 1)
        return f"{scheme}://{self.prefix}/{rest}"

    def key(self, served: str) -> str | None:
        """The report's key for a tool or prompt served as `served` (the child's name, as
        the gateway sanitizes it), or None when it is not this child's."""
        if self.prefix is None:
            return sanitized(served)
        own = f"{self.prefix}__"
        return served.removeprefix(own) if served.startswith(own) else None

    def ours(self, uri: str) -> bool:
        """Is `uri` (a resource's or a template's, as served) this child's?"""
        return self.prefix is None or f"://{self.prefix}/" in uri

    def ununi(self, served: str) -> str:
        if self.prefix is None:
            return served
        return served.replace(f"://{self.prefix}/", "://", 1)


# Left out of every result compared: `_meta` (the gateway's and the child's bookkeeping) and
# the fields a 2026-07-28 result carries whoever serves it (resultType, the cache hints).
ENVELOPE = frozenset({"_meta", "resultType", "ttlMs", "cacheScope"})
CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}( [AP]M)?")


def _strip(value: Any, naming: Naming) -> Any:
    """A result as compared: `_meta` dropped (the gateway's and the child's own bookkeeping),
    URIs given back their child's form, clock times (server-everything's resources say when
    they were made) left out."""
    if isinstance(value, str):
        return CLOCK.sub("<time>", value)
    if isinstance(value, dict):
        return {
            key: (
                naming.ununi(item)
                if key == "uri" and isinstance(item, str)
                else _strip(item, naming)
            )
            for key, item in value.items()
            if key not in ENVELOPE
        }
    if isinstance(value, list):
        return [_strip(item, naming) for item in value]
    return value


def _formless(params: JsonObject) -> JsonObject:
    """An elicitation's params without `mode: "form"`, which a 2026-07-28 request names
    and a 2025-11-25 one may leave out (form is the default)."""
    return {k: v for k, v in params.items() if not (k == "mode" and v == "form")}


async def _call_raw(
    client: Client, naming: Naming, call: tuple[str, JsonObject], **options: Any
) -> JsonObject:
    name, arguments = call
    try:
        result = await client.call_tool(
            naming.name(name), arguments, retries=0, timeout=90, **options
        )
    except McpError as exc:
        return {"error": exc.code}
    return result.raw


async def _call(
    client: Client, naming: Naming, call: tuple[str, JsonObject], **options: Any
) -> Any:
    return _strip(await _call_raw(client, naming, call, **options), naming)


async def _read_what_it_returned(client: Client, result: JsonObject) -> Any:
    """resources/read of the first resource a tool's result names (embedded or a link), by
    the URI the client was given: can the client read what the tool pointed it to?"""
    for item in result.get("content", []):
        uri = item.get("resource", {}).get("uri") if item.get("type") == "resource" else None
        uri = item.get("uri") if item.get("type") == "resource_link" else uri
        if uri:
            read = await _quietly(client.request("resources/read", {"uri": uri}))
            return (
                {"error": read["error"]} if "error" in read else {"contents": len(read["contents"])}
            )
    return None


async def _quietly(request: Awaitable[JsonObject]) -> JsonObject:
    """A request's result, or its JSON-RPC error's code."""
    try:
        return await request
    except McpError as exc:
        return {"error": exc.code}


async def capability_report(client: Client, child: Child, naming: Naming, seen: Seen) -> JsonObject:
    """Every capability of `child` a client can use, as this client sees it."""
    report: JsonObject = {}
    caps = client.server_capabilities
    report["capabilities"] = {
        "resources.subscribe": bool(caps.get("resources", {}).get("subscribe")),
        "tasks": caps.get("tasks", {}).get("requests"),
        **{
            kind: kind in caps
            for kind in ("tools", "prompts", "resources", "completions", "logging")
        },
    }
    for tool in await client.list_tools(cache=False):
        raw = tool.raw
        own = naming.key(raw["name"])
        if own is None:
            continue
        report[f"tool {own}"] = {key: value for key, value in raw.items() if key != "name"}
    for kind in ("text", "structured", "image"):
        report[f"call {kind}"] = await _call(client, naming, getattr(child, kind))
    returned = await _call_raw(client, naming, child.resource)
    report["call resource"] = _strip(returned, naming)
    report["read the resource a call returned"] = await _read_what_it_returned(client, returned)

    progress: list[tuple[Any, Any]] = []
    report["call with progress"] = await _call(
        client,
        naming,
        child.progress,
        on_progress=lambda p: progress.append((p["progress"], p.get("total"))),
    )
    report["progress"] = progress

    await client.set_logging_level("debug")
    if child.log is not None:
        before = len(seen.logs)
        report["call with logging"] = await _call(client, naming, child.log)
        report["logs"] = [log.get("data") for log in seen.logs[before:]]
        await client.set_logging_level("error")
        before = len(seen.logs)
        await _call(client, naming, child.log)
        report["logs at error"] = [log.get("data") for log in seen.logs[before:]]

    before = len(seen.elicitations)
    report["call with elicitation"] = await _call(client, naming, child.elicit)
    report["elicitations"] = [
        _strip(_formless(params), naming) for params in seen.elicitations[before:]
    ]
    before = len(seen.samplings)
    report["call with sampling"] = await _call(client, naming, child.sample)
    report["samplings"] = [
        {key: value for key, value in params.items() if key in ("messages", "maxTokens")}
        for params in seen.samplings[before:]
    ]
    report["call with roots"] = await _call(client, naming, child.roots)

    prompts = await client.request("prompts/list", {})
    report["prompts"] = {
        own: _strip({k: v for k, v in prompt.items() if k != "name"}, naming)
        for prompt in prompts["prompts"]
        if (own := naming.key(prompt["name"])) is not None
    }
    name, arguments = child.prompt
    report["prompt get"] = _strip(
        await _quietly(
            client.request("prompts/get", {"name": naming.name(name), "arguments": arguments})
        ),
        naming,
    )
    ref, argument, value = child.completion
    served_ref = {**ref, "name": naming.name(ref["name"])} if "name" in ref else ref
    completed = await _quietly(
        client.request(
            "completion/complete",
            {"ref": served_ref, "argument": {"name": argument, "value": value}},
        )
    )
    report["completion"] = _strip(completed.get("completion", completed), naming)

    resources = await client.request("resources/list", {})
    report["resources"] = sorted(
        (_strip(r, naming) for r in resources["resources"] if naming.ours(r["uri"])),
        key=lambda r: r["uri"],
    )
    templates = await client.request("resources/templates/list", {})
    report["resource templates"] = [
        {**t, "uriTemplate": naming.ununi(t["uriTemplate"])}
        for t in _strip(templates["resourceTemplates"], naming)
        if naming.ours(t["uriTemplate"])
    ]
    report["resource read"] = _strip(
        await _quietly(client.request("resources/read", {"uri": naming.uri(child.read)})),
        naming,
    )
    report["resource updated"] = await _updates(client, child, naming, seen)
    report["task"] = await _task(client, child, naming)
    return report


async def _updates(client: Client, child: Child, naming: Naming, seen: Seen) -> Any:
    """resources/subscribe (2026-07-28: subscriptions/listen), then the call that changes
    the resource: the URIs of the updates that came."""
    uri, trigger = child.subscribe
    if client.is_stateless:
        try:
            async with client.listen(resource_uris=[naming.uri(uri)]) as events:
                await _trigger(client, naming, trigger)
                method, params = await events.next(UPDATE_WAIT)
                return [method, naming.ununi(params["uri"])]
        except McpError as exc:
            return {"error": exc.code}
        except TimeoutError:
            return {"error": f"no update in {UPDATE_WAIT} s"}
    before = len(seen.notifications)
    await client.subscribe_resource(naming.uri(uri))
    await _trigger(client, naming, trigger)

    def updated() -> list[Any] | None:
        found = [
            ["notifications/resources/updated", naming.ununi(params["uri"])]
            for method, params in seen.notifications[before:]
            if method == "notifications/resources/updated"
        ]
        return found[0] if found else None

    try:
        return await until(updated, timeout=UPDATE_WAIT)
    except AssertionError:  # until's own "timed out"
        return {"error": f"no update in {UPDATE_WAIT} s"}


async def _trigger(client: Client, naming: Naming, trigger: tuple[str, JsonObject]) -> None:
    """The call that makes the child send updates. server-everything's is a toggle, and a
    shared child may have it on already from another session: then it is called again."""
    result = await _call_raw(client, naming, trigger)
    text = (result.get("content") or [{}])[0].get("text", "")
    if isinstance(text, str) and text.startswith("Stopped simulated resource updates"):
        await _call_raw(client, naming, trigger)


async def _task(client: Client, child: Child, naming: Naming) -> Any:
    """A tool that must run as a task: task-augmented when the server declares tasks, a
    plain call otherwise. The report's first line and how the call was made."""
    if child.task is None:
        return None
    name, arguments = child.task
    if client.server_capabilities.get("tasks", {}).get("requests", {}).get("tools"):
        created = await client.request(
            "tools/call",
            {"name": naming.name(name), "arguments": arguments, "task": {"ttl": 120_000}},
        )
        task_id = created["task"]["taskId"]
        async with asyncio.timeout(90):
            while True:
                task = await client.request("tasks/get", {"taskId": task_id})
                if task["status"] in TERMINAL:
                    break
                await asyncio.sleep(min(task.get("pollInterval", 200), 1000) / 1000)
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=60)
        related = result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == task_id
        return {"made": "task", "status": task["status"], "related": related,
                "first line": result["content"][0]["text"].splitlines()[0]}  # fmt: skip
    plain = await _call(client, naming, child.task)
    text = plain["content"][0]["text"] if "content" in plain else plain
    return {"made": "call", "first line": text.splitlines()[0] if isinstance(text, str) else text}
