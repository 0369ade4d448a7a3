"""The parts of the `codex app-server` protocol (v2) the driver speaks, as data; no I/O
(specs/codex-tools.md, "app-server, as the driver uses it")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from codex_mcp.core.jsonrpc import JsonObject

# -- client -> app-server ---------------------------------------------------------
INITIALIZE: Final = "initialize"
INITIALIZED: Final = "initialized"  # a notification, after the initialize response
THREAD_START: Final = "thread/start"
TURN_START: Final = "turn/start"
TURN_INTERRUPT: Final = "turn/interrupt"

# -- app-server -> client: requests that need a decision ------------------------------
COMMAND_APPROVAL: Final = "item/commandExecution/requestApproval"
FILE_CHANGE_APPROVAL: Final = "item/fileChange/requestApproval"
# The v1 API's forms, sent only for conversations started through v1 methods; answered in
# case a future app-server routes some approval through them.
LEGACY_EXEC_APPROVAL: Final = "execCommandApproval"
LEGACY_PATCH_APPROVAL: Final = "applyPatchApproval"
APPROVAL_METHODS: Final = (
    COMMAND_APPROVAL,
    FILE_CHANGE_APPROVAL,
    LEGACY_EXEC_APPROVAL,
    LEGACY_PATCH_APPROVAL,
)
#: An MCP server's elicitation, passed on by app-server: since about 0.149 also Codex's own
#: approval of an MCP tool call (`_meta.codex_approval_kind = "mcp_tool_call"`). Anything
#: else app-server may ask gets -32601 from the connection: an answer, never a hang.
MCP_ELICITATION: Final = "mcpServer/elicitation/request"
MCP_ELICITATION_DECLINED: Final[JsonObject] = {"action": "decline", "content": None, "_meta": None}

# -- app-server -> client: notifications the driver acts on ------------------------------
THREAD_STARTED: Final = "thread/started"
TURN_STARTED: Final = "turn/started"
TURN_COMPLETED: Final = "turn/completed"
ITEM_STARTED: Final = "item/started"
ITEM_COMPLETED: Final = "item/completed"
ERROR: Final = "error"

ApprovalKind = Literal["command", "patch"]


def initialize_params(client_name: str, client_version: str) -> JsonObject:
    return {
        "clientInfo": {"name": client_name, "title": "codex-mcp", "version": client_version},
        "capabilities": None,
    }


@dataclass(frozen=True, slots=True)
class ThreadOptions:
    """How to start a thread: the `codex` tool's parameters, in app-server's terms."""

    model: str | None = None
    cwd: str | None = None
    approval_policy: str | None = None
    sandbox: str | None = None
    #: Config overrides on top of CODEX_HOME/config.toml (dotted keys or nested tables).
    config: JsonObject = field(default_factory=dict)
    base_instructions: str | None = None
    developer_instructions: str | None = None
    compact_prompt: str | None = None


def thread_start_params(options: ThreadOptions) -> JsonObject:
    params: JsonObject = {}
    for key, value in (
        ("model", options.model),
        ("cwd", options.cwd),
        ("approvalPolicy", options.approval_policy),
        ("sandbox", options.sandbox),
        ("baseInstructions", options.base_instructions),
        ("developerInstructions", options.developer_instructions),
    ):
        if value is not None:
            params[key] = value
    config = dict(options.config)
    if options.compact_prompt is not None:
        # thread/start has no field for it; it is the `compact_prompt` config key.
        config["compact_prompt"] = options.compact_prompt
    if config:
        params["config"] = config
    return params


def turn_start_params(thread_id: str, prompt: str) -> JsonObject:
    return {
        "threadId": thread_id,
        "input": [{"type": "text", "text": prompt, "text_elements": []}],
    }


def thread_id_of(params: JsonObject) -> str | None:
    """Which thread a notification or request belongs to (None: not thread-scoped)."""
    for key in ("threadId", "conversationId"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    thread = params.get("thread")
    if isinstance(thread, dict) and isinstance(thread.get("id"), str):
        return str(thread["id"])
    return None


def parent_thread_of(params: JsonObject) -> str | None:
    """For thread/started of a sub-agent's thread: the thread that spawned it."""
    thread = params.get("thread")
    if isinstance(thread, dict) and isinstance(thread.get("parentThreadId"), str):
        return str(thread["parentThreadId"])
    return None


@dataclass(frozen=True, slots=True)
class ApprovalDetails:
    """What Codex wants to do, for a person to judge."""

    thread_id: str
    turn_id: str | None
    #: app-server's id of the command or patch item (the old server's `codex_call_id`).
    call_id: str | None
    command: str | None = None
    #: The command as argv when app-server gave it as a list (v1 requests).
    argv: list[str] | None = None
    cwd: str | None = None
    reason: str | None = None
    #: For patches: [{"path", "kind": {"type": "add"|"delete"|"update", ...}, "diff"}].
    changes: list[JsonObject] | None = None
    grant_root: str | None = None
    #: The request's params as app-server sent them.
    raw: JsonObject = field(default_factory=dict)


def approval_kind(method: str) -> ApprovalKind:
    return "command" if method in (COMMAND_APPROVAL, LEGACY_EXEC_APPROVAL) else "patch"


def read_approval(method: str, params: JsonObject, items: dict[str, JsonObject]) -> ApprovalDetails:
    """An approval request's details. v2 file-change requests do not repeat the changes:
    they are on the fileChange item announced by item/started, looked up in `items`."""
    common: JsonObject = {
        "thread_id": thread_id_of(params) or "",
        "turn_id": _str(params.get("turnId")),
        "call_id": _str(params.get("itemId")) or _str(params.get("callId")),
        "reason": _str(params.get("reason")),
        "raw": params,
    }
    if method == LEGACY_EXEC_APPROVAL:
        argv = [str(part) for part in params.get("command") or []]
        return ApprovalDetails(
            command=" ".join(argv), argv=argv, cwd=_str(params.get("cwd")), **common
        )
    if method == COMMAND_APPROVAL:
        return ApprovalDetails(
            command=_str(params.get("command")), cwd=_str(params.get("cwd")), **common
        )
    changes: list[JsonObject] | None
    if method == LEGACY_PATCH_APPROVAL:
        file_changes = params.get("fileChanges") or {}
        changes = [_v2_change(path, change) for path, change in file_changes.items()]
    else:
        item = items.get(common["call_id"] or "", {})
        changes = item["changes"] if isinstance(item.get("changes"), list) else None
    return ApprovalDetails(changes=changes, grant_root=_str(params.get("grantRoot")), **common)


def _v2_change(path: str, change: Any) -> JsonObject:
    """A v1 FileChange ({"type", "content" | "unified_diff", "move_path"}) in v2's shape."""
    change = change if isinstance(change, dict) else {}
    kind: JsonObject = {"type": change.get("type")}
    if change.get("type") == "update":
        kind["move_path"] = change.get("move_path")
    diff = change.get("unified_diff") or change.get("content") or ""
    return {"path": path, "kind": kind, "diff": diff}


def approval_answer(method: str, approved: bool) -> JsonObject:
    """The response to an approval request. A refusal stops the turn (`cancel`), so the call
    ends at once instead of the model carrying on without the command."""
    if method in (LEGACY_EXEC_APPROVAL, LEGACY_PATCH_APPROVAL):
        return {"decision": "approved" if approved else "abort"}
    return {"decision": "accept" if approved else "cancel"}


def mcp_elicitation_request(params: JsonObject) -> JsonObject | None:
    """The MCP `elicitation/create` params for an `mcpServer/elicitation/request`, or None
    when it has no MCP form (app-server's `openai/form` modes, or fields of the wrong type):
    such a request is declined."""
    message = params.get("message")
    meta = params.get("_meta")
    if not isinstance(message, str):
        return None
    request: JsonObject = {"message": message}
    if isinstance(meta, dict):
        request["_meta"] = meta
    mode = params.get("mode", "form")
    if mode == "form" and isinstance(params.get("requestedSchema"), dict):
        request["requestedSchema"] = params["requestedSchema"]
        return request
    url, elicitation_id = params.get("url"), params.get("elicitationId")
    if mode == "url" and isinstance(url, str) and isinstance(elicitation_id, str):
        return {**request, "mode": "url", "url": url, "elicitationId": elicitation_id}
    return None


def mcp_elicitation_answer(result: JsonObject) -> JsonObject:
    """app-server's answer from the MCP caller's ElicitResult: its action and, on accept,
    its content; anything unreadable declines."""
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        return MCP_ELICITATION_DECLINED
    content = result.get("content") if action == "accept" else None
    return {
        "action": action,
        "content": content if isinstance(content, dict) else None,
        "_meta": None,
    }


def turn_of(params: JsonObject) -> JsonObject:
    turn = params.get("turn")
    return turn if isinstance(turn, dict) else {}


def agent_message_text(item: Any) -> str | None:
    if isinstance(item, dict) and item.get("type") == "agentMessage":
        text = item.get("text")
        return text if isinstance(text, str) else None
    return None


def final_message(turn: JsonObject) -> str | None:
    """The last agent message among a completed turn's items."""
    texts = [agent_message_text(item) for item in turn.get("items") or []]
    return next((text for text in reversed(texts) if text is not None), None)


def turn_error_message(turn: JsonObject) -> str:
    error = turn.get("error")
    if not isinstance(error, dict):
        return "the turn failed without saying why"
    message = str(error.get("message") or "the turn failed")
    details = error.get("additionalDetails")
    return f"{message} ({details})" if details else message


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
