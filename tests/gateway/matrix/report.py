"""The capability report: what one client session sees of one child, directly or through
the gateway, as plain JSON keyed by capability, with the gateway's renaming
(`server__tool`, `scheme://server/...`) undone so that the two compare field for field.
Every capability the child has is exercised (children.py says how): listings, calls (text,
structured, image, resources), progress, logging, elicitation, sampling, roots, prompts,
completion, resources (read, templates, a subscription or a listen), skills (list, get, a
folder, another file), tasks of 2025-11-25 (task-augmented tools/call, tasks/get, result,
cancel) and of 2026-07-28 (a task, a cancelled one), and a call cancelled by its client.
`hidden_report` is what a policy hides: not listed, and refused as an unknown name is."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from codex_mcp.client import Client, McpError
from codex_mcp.client.errors import RequestTimeout
from support.polling import until

from .children import Call, Child, JsonObject

ROOTS = [{"uri": "file:///side/by/side", "name": "side"}]
ELICITED = {"color": "blue", "number": 7, "pets": "cats", "username": "ada", "email": "a@b.c"}
TERMINAL = ("completed", "failed", "cancelled")
UPDATE_WAIT = 15  # seconds; server-everything sends its subscribers' updates every 5 s
CANCEL_AFTER = 1.5  # seconds a cancelled call runs before its client gives up
TASK_WAIT = 30  # seconds a task may take to end (they take under 10 s; a cell stays within 120 s)


@dataclass
class Seen:
    """What the client's callbacks saw."""

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
            "model": "matrix",
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
        return raw if self.prefix is None else f"{self.prefix}__{sanitized(raw)}"

    def uri(self, raw: str) -> str:
        if self.prefix is None or "://" not in raw:
            return raw
        scheme, rest = raw.split("://", 1)
        return f"{scheme}://{self.prefix}/{rest}"

    def key(self, served: str) -> str | None:
        """The report's key for a tool or prompt served as `served`, or None when it is
        not this child's."""
        if self.prefix is None:
            return sanitized(served)
        own = f"{self.prefix}__"
        return served.removeprefix(own) if served.startswith(own) else None

    def ours(self, uri: str) -> bool:
        return self.prefix is None or f"://{self.prefix}/" in uri

    def ununi(self, served: str) -> str:
        return served if self.prefix is None else served.replace(f"://{self.prefix}/", "://", 1)


# Left out of every result compared: `_meta` (the gateway's and the child's bookkeeping) and
# the fields a 2026-07-28 result carries whoever serves it (resultType, the cache hints).
ENVELOPE = frozenset({"_meta", "resultType", "ttlMs", "cacheScope"})
CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}( [AP]M)?")


def strip(value: Any, naming: Naming) -> Any:
    """A result as compared: the envelope dropped, URIs given back their child's form, clock
    times (server-everything's resources say when they were made) left out."""
    if isinstance(value, str):
        return CLOCK.sub("<time>", value)
    if isinstance(value, dict):
        return {
            key: (
                naming.ununi(item)
                if key == "uri" and isinstance(item, str)
                else strip(item, naming)
            )
            for key, item in value.items()
            if key not in ENVELOPE
        }
    if isinstance(value, list):
        return [strip(item, naming) for item in value]
    return value


async def quietly(request: Awaitable[JsonObject]) -> JsonObject:
    """A request's result, or its JSON-RPC error's code."""
    try:
        return await request
    except McpError as exc:
        return {"error": exc.code}


async def call_raw(client: Client, naming: Naming, call: Call, **options: Any) -> JsonObject:
    name, arguments = call
    try:
        result = await client.call_tool(
            naming.name(name), arguments, retries=0, timeout=90, **options
        )
    except McpError as exc:
        return {"error": exc.code}
    return result.raw


async def called(client: Client, naming: Naming, call: Call, **options: Any) -> Any:
    return strip(await call_raw(client, naming, call, **options), naming)


def capabilities(client: Client) -> JsonObject:
    caps = client.server_capabilities
    extensions = caps.get("extensions") or {}
    return {
        "resources.subscribe": bool(caps.get("resources", {}).get("subscribe")),
        "tasks": caps.get("tasks", {}).get("requests"),
        "skills": "io.modelcontextprotocol/skills" in extensions,
        **{k: k in caps for k in ("tools", "prompts", "resources", "completions", "logging")},
    }


async def capability_report(client: Client, child: Child, naming: Naming, seen: Seen) -> JsonObject:
    """Every capability of `child` a client can use, as this client sees it."""
    report: JsonObject = {}
    for tool in await client.list_tools(cache=False):
        own = naming.key(tool.raw["name"])
        if own is not None:
            report[f"tool {own}"] = {k: v for k, v in tool.raw.items() if k != "name"}
    report["call text"] = await called(client, naming, child.text)
    for kind in ("structured", "image"):
        if (call := getattr(child, kind)) is not None:
            report[f"call {kind}"] = await called(client, naming, call)
    if child.resource is not None:
        returned = await call_raw(client, naming, child.resource)
        report["call resource"] = strip(returned, naming)
        report["read the resource a call returned"] = await _read_returned(client, returned)
    if child.progress is not None:
        progress: list[tuple[Any, Any]] = []
        report["call with progress"] = await called(
            client, naming, child.progress,
            on_progress=lambda p: progress.append((p["progress"], p.get("total"))),
        )  # fmt: skip
        report["progress"] = progress
    report["set log level"] = await _set_level(client, "debug")
    if child.log is not None:
        before = len(seen.logs)
        report["call with logging"] = await called(client, naming, child.log)
        report["logs"] = [log.get("data") for log in seen.logs[before:]]
        await _set_level(client, "error")
        before = len(seen.logs)
        await called(client, naming, child.log)
        report["logs at error"] = [log.get("data") for log in seen.logs[before:]]
    if child.elicit is not None:
        before = len(seen.elicitations)
        report["call with elicitation"] = await called(client, naming, child.elicit)
        report["elicitations"] = [
            strip({k: v for k, v in p.items() if (k, v) != ("mode", "form")}, naming)
            for p in seen.elicitations[before:]
        ]
    if child.sample is not None:
        before = len(seen.samplings)
        report["call with sampling"] = await called(client, naming, child.sample)
        report["samplings"] = [
            {k: v for k, v in params.items() if k in ("messages", "maxTokens")}
            for params in seen.samplings[before:]
        ]
    if child.roots is not None:
        report["call with roots"] = await called(client, naming, child.roots)
    if child.prompt is not None:
        await _prompts(client, child, naming, report)
    if child.read is not None:
        await _resources(client, child, naming, seen, report)
    if child.skill is not None:
        await _skills(client, child, naming, report)
    if child.task_2025 is not None:
        report["task 2025"] = await _task_2025(client, child.task_2025, naming)
    if child.task_2026 is not None:
        report["task 2026"] = await _task_2026(client, child, naming)
    if child.cancel is not None:
        report["cancelled call"] = await _cancelled(client, child, naming)
    return report


async def _set_level(client: Client, level: str) -> Any:
    try:
        await client.set_logging_level(level)
    except McpError as exc:
        return {"error": exc.code}
    return None


async def _read_returned(client: Client, result: JsonObject) -> Any:
    """resources/read of the first resource a tool's result names, by the URI the client
    was given: can the client read what the tool pointed it to?"""
    for item in result.get("content", []):
        uri = item.get("resource", {}).get("uri") if item.get("type") == "resource" else None
        uri = item.get("uri") if item.get("type") == "resource_link" else uri
        if uri:
            read = await quietly(client.request("resources/read", {"uri": uri}))
            return {"error": read["error"]} if "error" in read else len(read["contents"])
    return None


async def _prompts(client: Client, child: Child, naming: Naming, report: JsonObject) -> None:
    assert child.prompt is not None
    prompts = await client.request("prompts/list", {})
    report["prompts"] = {
        own: strip({k: v for k, v in prompt.items() if k != "name"}, naming)
        for prompt in prompts["prompts"]
        if (own := naming.key(prompt["name"])) is not None
    }
    name, arguments = child.prompt
    got = client.request("prompts/get", {"name": naming.name(name), "arguments": arguments})
    report["prompt get"] = strip(await quietly(got), naming)
    if child.completion is not None:
        ref, argument, value = child.completion
        served = {**ref, "name": naming.name(ref["name"])} if "name" in ref else ref
        completed = await quietly(
            client.request(
                "completion/complete",
                {"ref": served, "argument": {"name": argument, "value": value}},
            )
        )
        report["completion"] = strip(completed.get("completion", completed), naming)


async def _resources(
    client: Client, child: Child, naming: Naming, seen: Seen, report: JsonObject
) -> None:
    assert child.read is not None
    resources = await client.request("resources/list", {})
    report["resources"] = sorted(
        (strip(r, naming) for r in resources["resources"] if naming.ours(r["uri"])),
        key=lambda r: r["uri"],
    )
    templates = await client.request("resources/templates/list", {})
    report["resource templates"] = [
        {**t, "uriTemplate": naming.ununi(t["uriTemplate"])}
        for t in strip(templates["resourceTemplates"], naming)
        if naming.ours(t["uriTemplate"])
    ]
    read = client.request("resources/read", {"uri": naming.uri(child.read)})
    report["resource read"] = strip(await quietly(read), naming)
    if child.subscribe is not None:
        report["resource updated"] = await _updates(client, child, naming, seen)


async def _updates(client: Client, child: Child, naming: Naming, seen: Seen) -> Any:
    """resources/subscribe (2026-07-28: subscriptions/listen), then the call that changes
    the resource: the URI of the first update that came."""
    assert child.subscribe is not None
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
    try:
        await client.subscribe_resource(naming.uri(uri))
    except McpError as exc:
        return {"error": exc.code}
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


async def _trigger(client: Client, naming: Naming, trigger: Call) -> None:
    """The call that makes the child send updates. server-everything's is a toggle, and a
    child that outlives a cell may have it on already: then it is called again."""
    result = await call_raw(client, naming, trigger)
    text = (result.get("content") or [{}])[0].get("text", "")
    if isinstance(text, str) and text.startswith("Stopped simulated resource updates"):
        await call_raw(client, naming, trigger)


async def _skills(client: Client, child: Child, naming: Naming, report: JsonObject) -> None:
    assert child.skill is not None
    skill, other, folder = child.skill
    listed = await quietly(client.request("skills/list", {}))
    report["skills"] = (
        sorted(
            (strip(s, naming) for s in listed["skills"] if naming.ours(s.get("uri", ""))),
            key=lambda s: str(s.get("uri")),
        )
        if "skills" in listed
        else listed
    )
    got = await quietly(client.request("skills/get", {"uri": naming.uri(skill)}))
    report["skill get"] = strip(got, naming)
    read = await quietly(client.request("resources/read", {"uri": naming.uri(other)}))
    report["skill file read"] = strip(read, naming)
    directory = client.request("resources/directory/read", {"uri": naming.uri(folder)})
    report["skill folder read"] = strip(await quietly(directory), naming)


async def _task_2025(client: Client, call: Call, naming: Naming) -> Any:
    """A tool that must run as a task: task-augmented when the server declares tasks
    (then followed with tasks/get and tasks/result, and a second one cancelled), a plain
    call otherwise. How the call was made, its status and first line."""
    name, arguments = call
    if not client.server_capabilities.get("tasks", {}).get("requests", {}).get("tools"):
        plain = await called(client, naming, call)
        text = plain["content"][0]["text"] if "content" in plain else plain
        return {
            "made": "call",
            "first line": text.splitlines()[0] if isinstance(text, str) else text,
        }
    params = {"name": naming.name(name), "arguments": arguments, "task": {"ttl": 120_000}}
    try:
        created = await client.request("tools/call", params)
        task_id = created["task"]["taskId"]
        task = await _until_terminal(client, task_id)
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=60)
        related = result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == task_id
        cancelled = await client.request("tools/call", params)
        other = cancelled["task"]["taskId"]
        await client.request("tasks/cancel", {"taskId": other})
        after = await _until_terminal(client, other)
    except McpError as exc:
        return {"error": exc.code, "message": exc.message[:200]}
    except (TimeoutError, AssertionError):  # asyncio's, or until's own "timed out"
        return {"error": f"no end in {TASK_WAIT} s"}
    return {"made": "task", "status": task["status"], "related": related,
            "first line": result["content"][0]["text"].splitlines()[0],
            "cancelled": after["status"]}  # fmt: skip


async def _until_terminal(client: Client, task_id: str) -> JsonObject:
    async with asyncio.timeout(TASK_WAIT):
        while True:
            task = await client.request("tasks/get", {"taskId": task_id})
            task = task.get("task", task)
            if task["status"] in TERMINAL:
                return task
            await asyncio.sleep(min(task.get("pollInterval", 200), 1000) / 1000)


async def _task_2026(client: Client, child: Child, naming: Naming) -> Any:
    """A tool that may run as a 2026-07-28 task: a task for a client speaking 2026-07-28
    (this client declares the extension), followed with tasks/get, and a long one
    cancelled with tasks/cancel; a plain call for any other."""
    assert child.task_2026 is not None
    if not client.is_stateless:
        plain = await called(client, naming, child.task_2026)
        return {"made": "call", "result": plain}
    name, arguments = child.task_2026
    try:
        created = await client.session.request(
            "tools/call", {"name": naming.name(name), "arguments": arguments}
        )
        if created.get("resultType") != "task":
            return {"made": "call", "result": strip(created, naming)}
        done = await until(lambda: _terminal_2026(client, created["taskId"]), timeout=TASK_WAIT)
        report: JsonObject = {"made": "task", "status": done["status"],
                              "result": strip(done.get("result"), naming)}  # fmt: skip
        if child.long_2026 is not None:
            long_name, long_arguments = child.long_2026
            long = await client.session.request(
                "tools/call", {"name": naming.name(long_name), "arguments": long_arguments}
            )
            await client.cancel_task(long["taskId"])
            ended = await until(lambda: _terminal_2026(client, long["taskId"]), timeout=TASK_WAIT)
            report["cancelled"] = ended["status"]
        return report
    except McpError as exc:
        return {"error": exc.code, "message": exc.message[:200]}
    except (TimeoutError, AssertionError):  # asyncio's, or until's own "timed out"
        return {"error": f"no end in {TASK_WAIT} s"}


async def _terminal_2026(client: Client, task_id: str) -> JsonObject | None:
    task = await client.get_task(task_id)
    return task if task["status"] in TERMINAL else None


async def _cancelled(client: Client, child: Child, naming: Naming) -> Any:
    """A long call its client gives up on (notifications/cancelled, or the stream closed),
    then a plain call: the child serves on."""
    assert child.cancel is not None
    name, arguments = child.cancel
    try:
        await client.call_tool(naming.name(name), arguments, retries=0, timeout=CANCEL_AFTER)
        outcome = "answered"
    except RequestTimeout:
        outcome = "cancelled"
    except McpError as exc:
        outcome = f"error {exc.code}"
    after = await called(client, naming, child.text)
    return {"outcome": outcome, "then": after}


# -- what a policy hides ---------------------------------------------------------------------
async def _refusal(request: Awaitable[Any], name: str) -> Any:
    """How a use is refused, with the name taken out; or that it was not."""
    try:
        result = await request
    except McpError as exc:
        return {"error": exc.code, "message": exc.message.replace(name, "<name>")[:200]}
    raw = getattr(result, "raw", result)
    if isinstance(raw, dict) and raw.get("isError"):
        text = raw.get("content", [{}])[0].get("text", "")
        return {"isError": str(text).replace(name, "<name>")[:200]}
    return "served"


async def _as_unknown(
    client: Client, method: str, key: str, hidden: str, unknown: str, wording: bool
) -> Any:
    """`hidden` used, against a name nothing serves used the same way: "refused as
    unknown" when the answers agree (the code; the words too when `wording`)."""

    def use(name: str) -> Awaitable[Any]:
        if method == "tools/call":
            return client.call_tool(name, {}, retries=0, timeout=60)
        return client.request(method, {key: name})

    refused = await _refusal(use(hidden), hidden)
    baseline = await _refusal(use(unknown), unknown)
    if refused == "served":
        return "served"
    if not wording and isinstance(refused, dict) and isinstance(baseline, dict):
        refused, baseline = refused.get("error"), baseline.get("error")
    return "refused as unknown" if refused == baseline else {"hidden": refused, "unknown": baseline}


async def hidden_report(client: Client, child: Child, naming: Naming) -> JsonObject:
    """What the policies hide of `child`: each use refused as an unknown name's, each
    listing without it. The skill's other file first: for a lazy or idle-stopped child
    it is the first thing that reaches the gateway."""
    hidden = child.hidden
    report: JsonObject = {}
    if hidden.skill is not None and hidden.skill_file is not None:
        report["hidden skill file read"] = await _as_unknown(
            client, "resources/read", "uri", naming.uri(hidden.skill_file),
            naming.uri("skill://no-such-skill/references/FORMS.md"), wording=False,
        )  # fmt: skip
        report["hidden skill get"] = await _as_unknown(
            client, "skills/get", "uri", naming.uri(hidden.skill),
            naming.uri("skill://no-such-skill/SKILL.md"), wording=False,
        )  # fmt: skip
    report["hidden tool call"] = await _as_unknown(
        client, "tools/call", "name", naming.name(hidden.tool), naming.name("no_such_tool"), True
    )
    if hidden.prompt is not None:
        report["hidden prompt get"] = await _as_unknown(
            client, "prompts/get", "name", naming.name(hidden.prompt),
            naming.name("no_such_prompt"), wording=True,
        )  # fmt: skip
    if hidden.resource is not None:
        scheme = hidden.resource.split("://")[0]
        report["hidden resource read"] = await _as_unknown(
            client, "resources/read", "uri", naming.uri(hidden.resource),
            naming.uri(f"{scheme}://no-such-resource"), wording=False,
        )  # fmt: skip
    listed: list[str] = [t.name for t in await client.list_tools(cache=False)]
    prompts = await quietly(client.request("prompts/list", {}))
    listed += [p["name"] for p in prompts.get("prompts", [])]
    resources = await quietly(client.request("resources/list", {}))
    listed += [r["uri"] for r in resources.get("resources", [])]
    if hidden.skill is not None:
        skills = await quietly(client.request("skills/list", {}))
        listed += [s["uri"] for s in skills.get("skills", [])]
    names = {naming.name(hidden.tool)}
    names |= {naming.name(hidden.prompt)} if hidden.prompt else set()
    names |= {naming.uri(u) for u in (hidden.resource, hidden.skill) if u}
    folder = naming.uri(hidden.skill.removesuffix("SKILL.md")) if hidden.skill else None
    report["hidden listed"] = sorted(
        n for n in listed if n in names or (folder is not None and n.startswith(folder))
    )
    return report


#: What `hidden_report` gives when everything hidden is hidden.
def hidden_expected(child: Child) -> JsonObject:
    fields = ["hidden tool call"]
    if child.hidden.skill is not None:
        fields += ["hidden skill file read", "hidden skill get"]
    if child.hidden.prompt is not None:
        fields.append("hidden prompt get")
    if child.hidden.resource is not None:
        fields.append("hidden resource read")
    return {**{f: "refused as unknown" for f in fields}, "hidden listed": []}
