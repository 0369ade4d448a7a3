"""A server that exercises every feature of codex-mcp, written with the public library.

It also carries the fixtures the official MCP conformance suite expects by name,
so `codex-mcp-http --serve examples/everything_server.py --port 3001` is the
suite's target. Run it over stdio with `codex-mcp --serve examples/everything_server.py`.
"""

from __future__ import annotations

import asyncio
import base64
import struct
from pathlib import Path
from typing import Annotated, Any

from codex_mcp import (
    Audio,
    Context,
    EmbeddedResource,
    Image,
    Message,
    ResourceContents,
    ResourceLink,
    Server,
    ToolError,
)
from codex_mcp.core import McpError
from pydantic import BaseModel, Field

# A 1x1 red pixel.
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def _tiny_wav(samples: int = 8, rate: int = 8000) -> bytes:
    """A valid mono 8-bit PCM WAV file of silence."""
    data = b"\x80" * samples
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        36 + len(data),
        b"WAVE",
        b"fmt ",
        16,
        1,
        1,
        rate,
        rate,
        1,
        8,
        b"data",
        len(data),
    )
    return header + data


server = Server(
    "codex-mcp-everything",
    title="codex-mcp everything server",
    instructions="Exercises every MCP feature; carries the conformance suite's fixtures.",
)


# -- content --------------------------------------------------------------------------
@server.tool(read_only=True)
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool(read_only=True)
def test_image_content() -> Image:
    """Returns an image (a 1x1 red PNG)."""
    return Image(RED_PIXEL_PNG, "image/png")


@server.tool(read_only=True)
def test_audio_content() -> Audio:
    """Returns a short WAV clip."""
    return Audio(_tiny_wav(), "audio/wav")


@server.tool(read_only=True)
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        ResourceContents(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )
    )


@server.tool(read_only=True)
def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    return [
        "Multiple content types test:",
        Image(RED_PIXEL_PNG, "image/png"),
        EmbeddedResource(
            ResourceContents(
                "test://mixed-content-resource",
                text='{"test":"data","value":123}',
                mime_type="application/json",
            )
        ),
    ]


@server.tool(read_only=True)
def resource_link_example() -> ResourceLink:
    """Returns a link to a resource instead of its contents."""
    return ResourceLink("test://static-text", "static-text", mime_type="text/plain")


# -- logging, progress, errors ------------------------------------------------------------
@server.tool(read_only=True)
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool(read_only=True)
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    await ctx.report_progress(0, 100)
    await asyncio.sleep(0.05)
    await ctx.report_progress(50, 100)
    await asyncio.sleep(0.05)
    await ctx.report_progress(100, 100)
    return "Tool with progress executed successfully"


@server.tool(read_only=True)
async def stream_progress(count: int, ctx: Context) -> str:
    """Reports `count` progress steps as fast as it can (the benchmark's streaming case)."""
    count = max(0, min(count, 100_000))
    for step in range(1, count + 1):
        await ctx.report_progress(step, count)
    return f"sent {count} progress notifications"


@server.tool(read_only=True)
def test_error_handling() -> str:
    """Always fails."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(read_only=True)
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call; the result arrives after the client resumes."""
    ctx.close_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


# -- server-to-client requests ---------------------------------------------------------------
@server.tool(read_only=True)
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer the prompt."""
    result = await ctx.sample(prompt, max_tokens=100)
    content = result.get("content", {})
    text = content.get("text", "") if isinstance(content, dict) else str(content)
    return f"LLM response: {text}"


@server.tool(read_only=True)
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email address."""
    result = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: action={result.get('action')}, content={result.get('content', {})}"


@server.tool(read_only=True)
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicits with a default for every primitive type (SEP-1034)."""
    result = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified", "default": True},
            },
        },
    )
    return (
        f"Elicitation completed: action={result.get('action')}, content={result.get('content', {})}"
    )


@server.tool(read_only=True)
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicits with the five enum schema variants (SEP-1330)."""
    result = await ctx.elicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
        },
    )
    return (
        f"Elicitation completed: action={result.get('action')}, content={result.get('content', {})}"
    )


@server.tool(read_only=True)
async def list_client_roots(ctx: Context) -> list[str]:
    """Lists the client's roots (roots/list)."""
    return [root.get("uri", "") for root in await ctx.list_roots()]


# -- schemas and structured output ---------------------------------------------------------------
_JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    input_schema=_JSON_SCHEMA_2020_12,
    read_only=True,
)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return f"Received: {sorted(arguments)}"


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


@server.tool(read_only=True, idempotent=True, title="Weather report")
def weather(
    city: Annotated[str, Field(description="City name")],
    unit: Annotated[str, Field(description="c or f")] = "c",
) -> Weather:
    """A made-up weather report, as structured output."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


@server.tool(read_only=True)
def add(a: int, b: int) -> int:
    """Adds two integers (structured output wraps the result)."""
    return a + b


# -- skills (SEP-2640) ----------------------------------------------------------------------
# examples/skills/ holds a skill folder with subfolders (resources/directory/read has a
# subdirectory to list); one more skill is defined in code, under a prefix.
server.add_skills_directory(Path(__file__).resolve().parent / "skills")
server.add_skill(
    "release-notes",
    "Write release notes from the merged changes",
    "# Release notes\n\nGroup the changes by area; use `examples/entry.md` for each.\n",
    files={"examples/entry.md": "- **area**: what changed, and why it matters.\n"},
    prefix="acme/docs",
)


# -- resources ------------------------------------------------------------------------------
# The same for everyone and never changing: 2026-07-28 clients may cache it for a minute,
# shared caches included (every other read has the server's hints: ttlMs 0, private).
@server.resource(
    "test://static-text",
    name="static-text",
    mime_type="text/plain",
    ttl_ms=60_000,
    cache_scope="public",
)
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG)."""
    return RED_PIXEL_PNG


@server.resource(
    "test://template/{id}/data",
    name="template-data",
    mime_type="application/json",
    complete={"id": ["1", "2", "3", "123"]},
)
def template_data(id: str) -> dict[str, Any]:
    """Data for an id."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


_watched = {"version": 0}


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource that changes when `touch_watched_resource` is called."""
    return f"Watched resource, version {_watched['version']}"


@server.tool()
def touch_watched_resource() -> str:
    """Changes test://watched-resource; subscribers get notifications/resources/updated."""
    _watched["version"] += 1
    server.notify_resource_updated("test://watched-resource")
    return f"version {_watched['version']}"


# -- prompts ----------------------------------------------------------------------------------
@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt with no arguments."""
    return "This is a simple prompt for testing."


@server.prompt(complete={"arg1": ["paris", "park", "party"]})
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Message]:
    """A prompt that embeds a resource."""
    return [
        Message(
            "user",
            EmbeddedResource(
                ResourceContents(
                    resourceUri,
                    text="Embedded resource content for testing.",
                    mime_type="text/plain",
                )
            ),
        ),
        Message("user", "Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[Message]:
    """A prompt with an image."""
    return [
        Message("user", Image(RED_PIXEL_PNG, "image/png")),
        Message("user", "Please analyze the image above."),
    ]


# -- 2026-07-28: input-required rounds -------------------------------------------------------
# In a 2026-07-28 request, ctx.elicit/sample/list_roots answer the call with an
# input-required result and the tool runs again, from the top, when the client retries
# with the answers; a legacy session gets ordinary server-to-client requests. `key=`
# names the question (the conformance suite looks for these keys).
_NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def _content(answer: dict[str, Any], field: str) -> Any:
    content = answer.get("content")
    return content.get(field) if isinstance(content, dict) else None


def _sampled_text(result: dict[str, Any]) -> str:
    content = result.get("content", {})
    return str(content.get("text", "")) if isinstance(content, dict) else str(content)


@server.tool(read_only=True)
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (key user_name), then greets them."""
    answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
    return f"Hello, {_content(answer, 'name')}!"


@server.tool(read_only=True)
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question (key capital_question)."""
    result = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return _sampled_text(result)


@server.tool(read_only=True)
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots (key client_roots) and names them."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)


@server.tool(read_only=True)
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation (key confirm); the answer comes back with the signed state."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Please confirm", schema, key="confirm")
    return f"state-ok: round {ctx.round}, confirmed={_content(answer, 'ok')}"


@server.tool(read_only=True)
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three questions at once: a name, a greeting from the model, the roots."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"{_sampled_text(greeting)} {_content(name, 'name')} ({len(roots)} roots)"


@server.tool(read_only=True)
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks one question per round: a name (step1), then a favourite colour (step2)."""
    name = await ctx.elicit("Step 1: What is your name?", _NAME_SCHEMA, key="step1")
    color_schema = {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
    }
    color = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
    return f"{_content(name, 'name')} likes {_content(color, 'color')}"


@server.tool(read_only=True)
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks a confirmation; a retry whose requestState was altered is refused."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Please confirm", schema, key="confirm")
    return f"confirmed={_content(answer, 'ok')}"


@server.tool(read_only=True)
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the client can answer: the model if it can sample, else the user."""
    capabilities = ctx.client_capabilities
    if "sampling" in capabilities:
        return _sampled_text(await ctx.sample("Say hello", max_tokens=20, key="hello"))
    if "elicitation" in capabilities:
        return str(_content(await ctx.elicit("Your name?", _NAME_SCHEMA, key="name"), "name"))
    return "the client can answer nothing"


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for its context first (key user_context)."""
    schema = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }
    answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
    return f"Use this context: {_content(answer, 'context')}"


@server.tool(read_only=True)
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's model: a client that cannot sample is refused."""
    return _sampled_text(await ctx.sample("Say something", max_tokens=20))


@server.tool(read_only=True)
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user something; never a server-to-client request to a modern client."""
    answer = await ctx.elicit("Anything to add?", _NAME_SCHEMA, key="streaming")
    return f"Got {_content(answer, 'name')}"


@server.tool(read_only=True)
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info: a request that did not ask for a log level gets no log messages."""
    await ctx.info("test_logging_tool ran")
    return "logged"


def _dynamic_tool() -> str:
    """Comes and goes with test_trigger_tool_change."""
    return "dynamic"


def _dynamic_prompt() -> str:
    """Comes and goes with test_trigger_prompt_change."""
    return "dynamic"


@server.tool()
def test_trigger_tool_change() -> str:
    """Adds or removes test_dynamic_tool: list_changed reaches the listeners."""
    if "test_dynamic_tool" in server.functions.tools:
        server.remove_tool("test_dynamic_tool")
        return "removed test_dynamic_tool"
    server.add_tool(_dynamic_tool, name="test_dynamic_tool", read_only=True)
    return "added test_dynamic_tool"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Adds or removes test_dynamic_prompt: list_changed reaches the listeners."""
    if "test_dynamic_prompt" in server.functions.prompts:
        server.functions.remove_prompt("test_dynamic_prompt")
        return "removed test_dynamic_prompt"
    server.prompt(name="test_dynamic_prompt")(_dynamic_prompt)
    return "added test_dynamic_prompt"


@server.tool(
    read_only=True,
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    },
)
def test_header_param(region: str) -> str:
    """Its region argument travels in the Mcp-Param-Region HTTP header too (x-mcp-header)."""
    return f"region {region}"


# -- 2026-07-28: tasks (the io.modelcontextprotocol/tasks extension) ---------------------
# A tool with task= becomes a task, for a client that declared the extension, once it
# waits for something (or calls ctx.start_task()); before that it may ask for input
# with input-required rounds, after it the task itself asks (tasks/get, tasks/update).
@server.tool(read_only=True)
def greet(name: str) -> str:
    """Greets; never a task."""
    return f"Hello, {name}!"


@server.tool(read_only=True, task="optional")
async def slow_compute(seconds: float, label: str = "") -> str:
    """Sleeps `seconds` (at most 120), then reports; a task when the client allows one."""
    await asyncio.sleep(max(0.0, min(seconds, 120.0)))
    return f"computed {label or 'nothing'} in {seconds:g} s"


@server.tool(read_only=True, task="required")
async def failing_job() -> str:
    """Works for a second, then fails as a tool (isError); only ever runs as a task."""
    await asyncio.sleep(1)
    raise ToolError("failing_job failed, as it always does")


@server.tool(read_only=True, task="optional")
async def protocol_error_job() -> str:
    """Works briefly, then fails with a JSON-RPC error (the task ends failed)."""
    await asyncio.sleep(0.2)
    raise McpError(-32603, "protocol_error_job hit an internal error on purpose")


_CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


@server.tool(destructive=True, task="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks, inside the task, whether to delete `filename` (nothing is deleted)."""
    await ctx.start_task()
    answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM_SCHEMA, key="confirm")
    return f"{filename}: {'deleted' if _content(answer, 'confirm') else 'kept'}"


@server.tool(read_only=True, task="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once, inside the task."""
    await ctx.start_task()
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    }
    first, second = await asyncio.gather(
        ctx.elicit("First input?", schema, key="first"),
        ctx.elicit("Second input?", schema, key="second"),
    )
    return f"{_content(first, 'name')} and {_content(second, 'name')}"


@server.tool(read_only=True, task="required")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name on the call itself, then works on as a task."""
    answer = await ctx.elicit("What is your name?", _NAME_SCHEMA, key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return f"Hello, {_content(answer, 'name')}, from a task"


if __name__ == "__main__":
    server.run()
