"""Tools made from plain functions: schema from type hints, validation, result mapping."""

from __future__ import annotations

import contextvars
import dataclasses
import inspect
import logging
import typing
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Unpack, get_origin

if TYPE_CHECKING:
    from pydantic import TypeAdapter


from ..core.context import RequestContext
from ..core.elicitation import ElicitationMismatch
from ..core.errors import McpError
from ..core.jsonrpc import JsonObject
from ..core.ready import Ready
from ..core.session import ClientError
from .component import CommonOptions, FunctionComponent
from .content import Content, ToolResult, is_content_value, to_blocks
from .errors import SignatureMismatch, ToolError
from .signature import argument_validator
from .suspension import never_suspends, run_to_end
from .tool_results import check_output, error_result, structured_result

log = logging.getLogger("codex_mcp.tools")

TaskSupport = Literal["optional", "required"]

_ANNOTATION_KEYS = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


class FunctionTool(FunctionComponent):
    """One tool: its wire definition and how to call it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        annotations: JsonObject | None = None,
        input_schema: JsonObject | None = None,
        output_schema: JsonObject | None = None,
        structured_output: bool | None = None,
        task: TaskSupport | None = None,
        **options: Unpack[CommonOptions],
    ) -> None:
        super().__init__(fn, **options)
        if task not in (None, "optional", "required"):
            raise ValueError(f'task must be "optional" or "required", not {task!r}')
        #: Whether a 2026-07-28 call of this tool may become a task (the tasks extension):
        #: "optional", or "required" (a client without the extension is refused).
        self.task = task
        #: Answered inline, without a task: a coroutine with no suspension point, or a
        #: plain function the author asked to run on the event loop.
        self.inline = never_suspends(fn) if self.is_async else not self.run_sync_in_thread
        # An explicit input schema is checked with jsonschema instead of the pydantic model.
        self.raw_input_schema = input_schema
        self._return_hint = self.hints.get("return", inspect.Signature.empty)
        self._structured_output = structured_output
        self._explicit_output_schema = output_schema
        self.annotations = dict(annotations or {})
        flags = (read_only, destructive, idempotent, open_world)
        for key, value in zip(_ANNOTATION_KEYS.values(), flags, strict=True):
            if value is not None:
                self.annotations[key] = value
        if self.title and "title" not in self.annotations:
            self.annotations["title"] = self.title
        self._definition_cache: JsonObject | None = None

    def _build(self) -> None:
        """Build the argument model and output adapter (this is what imports pydantic)."""
        skip = {self.context_param} if self.context_param else set()
        self.arguments = argument_validator(self.fn, self.name, skip)
        self.return_adapter, self.wrap_result, derived_output = _output_for(
            self._return_hint, self._structured_output
        )
        explicit = self._explicit_output_schema
        self.output_schema = explicit if explicit is not None else derived_output
        self._definition_cache = self.describe(
            inputSchema=self.raw_input_schema or self.arguments.json_schema(),
            outputSchema=self.output_schema,
            annotations=self.annotations,
        )

    @property
    def definition(self) -> JsonObject:
        if self._definition_cache is None:
            self._build()
            assert self._definition_cache is not None
        return self._definition_cache

    def start(self, arguments: JsonObject, ctx: RequestContext) -> Awaitable[JsonObject]:
        """The call's outcome: Ready at once when the tool cannot suspend (no task needed,
        as for ping), else the coroutine that runs it."""
        if self.task is not None:
            return ctx.run_as_task(self.call(arguments, ctx), required=self.task == "required")
        if self.inline:
            # A task would run the tool in a copy of the context; so does this.
            return Ready(contextvars.copy_context().run(self._call_inline, arguments, ctx))
        return self.call(arguments, ctx)

    async def call(self, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        try:
            kwargs = self._arguments(arguments, ctx)
        except SignatureMismatch as exc:
            return self._invalid(exc)
        try:
            value = await self.invoke(kwargs)
        except Exception as exc:
            return self._failed(exc, ctx)
        return self._result(value, ctx)

    def _call_inline(self, arguments: JsonObject, ctx: RequestContext) -> JsonObject:
        try:
            kwargs = self._arguments(arguments, ctx)
        except SignatureMismatch as exc:
            return self._invalid(exc)
        try:
            value = run_to_end(self.fn(**kwargs)) if self.is_async else self.fn(**kwargs)
        except Exception as exc:
            return self._failed(exc, ctx)
        return self._result(value, ctx)

    def _arguments(self, arguments: JsonObject, ctx: RequestContext) -> dict[str, Any]:
        if self._definition_cache is None:
            self._build()
        kwargs = self._validated(arguments)
        if self.context_param:
            kwargs[self.context_param] = ctx
        return kwargs

    def _invalid(self, exc: SignatureMismatch) -> JsonObject:
        return error_result(f"Invalid arguments for tool '{self.name}': {exc}")

    def _failed(self, exc: Exception, ctx: RequestContext) -> JsonObject:
        if isinstance(exc, ToolError):
            return error_result(str(exc))
        if isinstance(exc, ClientError | ElicitationMismatch):
            # The client refused or failed a request the tool made (sampling, elicitation...):
            # the tool failed, the tools/call request did not.
            return error_result(f"Error executing tool {self.name}: {exc.message}")
        if isinstance(exc, McpError):
            raise exc  # a deliberate protocol error
        log.warning("tool %s raised %s", self.name, exc, exc_info=exc, extra=ctx.session.log_extra)
        return error_result(f"Error executing tool {self.name}: {exc}")

    def _result(self, value: Any, ctx: RequestContext) -> JsonObject:
        if type(value) is str and self.return_adapter is None:
            return {"content": [{"type": "text", "text": value}]}  # the common case, first
        try:
            return self.to_result(value)
        except Exception as exc:  # whatever the value: a result we can't map is the tool's fault
            log.warning(
                "tool %s returned an invalid result: %s",
                self.name,
                exc,
                extra=ctx.session.log_extra,
            )
            return error_result(f"Tool {self.name} returned an invalid result: {exc}")

    def _validated(self, arguments: JsonObject) -> dict[str, Any]:
        if self.raw_input_schema is not None:
            from .tool_results import describe_validation_errors, schema_validator

            errors = list(schema_validator(self.raw_input_schema).iter_errors(arguments))
            if errors:
                raise SignatureMismatch(describe_validation_errors(errors))
            return dict(arguments)
        return self.arguments.validate(arguments)

    def to_result(self, value: Any) -> JsonObject:
        if isinstance(value, ToolResult):
            return self._explicit(value)
        if _holds_content(value):
            return {"content": to_blocks(value)}
        if self.return_adapter is not None:
            structured = self.return_adapter.dump_python(
                self.return_adapter.validate_python(value), mode="json"
            )
            if self.wrap_result:
                structured = {"result": structured}
            return structured_result(structured)
        if value is None:
            return {"content": []}
        if is_content_value(value):
            return {"content": to_blocks(value)}
        # Untyped but structured: send it as JSON text, and as structuredContent if it is an object.
        from pydantic import TypeAdapter

        jsonable = TypeAdapter(Any).dump_python(value, mode="json")
        if isinstance(jsonable, dict):
            return structured_result(jsonable)
        import orjson

        return {"content": [{"type": "text", "text": orjson.dumps(jsonable).decode()}]}

    def _explicit(self, value: ToolResult) -> JsonObject:
        content = to_blocks(value.content) if value.content else []
        result: JsonObject
        if value.structured is not None:
            if self.output_schema is not None and not value.is_error:
                check_output(value.structured, self.output_schema)
            result = structured_result(value.structured, content)
        else:
            result = {"content": content}
        if value.is_error:
            result["isError"] = True
        if value.meta:
            result["_meta"] = value.meta
        return result


def _holds_content(value: Any) -> bool:
    """A content object, or a list with at least one: content, whatever the annotation."""
    if isinstance(value, Content):
        return True
    return isinstance(value, list | tuple) and any(isinstance(v, Content) for v in value)


def _is_structured_type(hint: Any) -> bool:
    from pydantic import BaseModel

    origin = get_origin(hint) or hint
    if isinstance(origin, type):
        if issubclass(origin, BaseModel) or dataclasses.is_dataclass(origin):
            return True
        if issubclass(origin, dict):
            return True
    return typing.is_typeddict(hint)


def _is_content_type(hint: Any) -> bool:
    if hint in (str, type(None), ToolResult):
        return True
    if isinstance(hint, type) and issubclass(hint, Content):
        return True
    args = typing.get_args(hint)
    if args and get_origin(hint) in (
        list,
        tuple,
        typing.Union,
        getattr(__import__("types"), "UnionType", None),
    ):
        return all(_is_content_type(arg) or arg is Ellipsis for arg in args)
    return False


def _output_for(
    hint: Any, structured_output: bool | None
) -> tuple[TypeAdapter[Any] | None, bool, JsonObject | None]:
    """(adapter, wrap in {"result": ...}, outputSchema) for a return annotation."""
    if structured_output is False or hint is inspect.Signature.empty or hint is Any:
        return None, False, None
    if structured_output is None and Any in typing.get_args(hint):
        # list[Any] and friends say nothing about the shape: no schema to promise.
        return None, False, None
    if _is_content_type(hint):
        return None, False, None
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(hint)
    schema = adapter.json_schema(mode="serialization")
    if _is_structured_type(hint):
        return adapter, False, schema
    wrapped: JsonObject = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema.pop("$defs")
    return adapter, True, wrapped
