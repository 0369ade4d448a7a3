"""OpenTelemetry spans and W3C trace context, the optional `otel` extra
(specs/observability.md, "Traces")."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..session_logs import session_label

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.typedefs import Handler

    from .dispatch import Call

ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
TRACEPARENT, TRACESTATE = "traceparent", "tracestate"
INSTRUMENTATION = "codex_mcp"
TOOLS_CALL = "tools/call"

_provider: Any = None


def requested() -> bool:
    """Is tracing asked for (an OTLP endpoint in the environment, or a provider given)?"""
    return _provider is not None or any(os.environ.get(name) for name in ENDPOINT_ENVS)


def use_provider(provider: Any) -> None:
    """Trace with this TracerProvider (None: back to the environment's choice)."""
    global _provider
    _provider = provider


def tracer() -> Any:
    """The tracer to use, or None when tracing is off (or the `otel` extra is missing)."""
    global _provider
    if not requested():
        return None
    if _provider is None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            import logging

            logging.getLogger("codex_mcp.tracing").warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed: "
                "pip install 'codex-mcp[otel]'"
            )
            return None
        provider = TracerProvider(
            resource=Resource.create(
                {"service.name": os.environ.get("OTEL_SERVICE_NAME", "codex-mcp")}
            )
        )
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _provider = provider
    return _provider.get_tracer(INSTRUMENTATION)


class TracingSink:
    """A sink of dispatch.py: a span per request."""

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import context, trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.tracer = tracer
        self.propagator = TraceContextTextMapPropagator()
        self.context = context
        self.trace = trace
        self.server_kind = trace.SpanKind.SERVER
        self.error_status = trace.Status(trace.StatusCode.ERROR)

    def begin(self, call: Call) -> None:
        meta = call.params.get("_meta")
        parent = None
        if type(meta) is dict and TRACEPARENT in meta:
            parent = self.propagator.extract(meta)
        # else: the HTTP request's traceparent, made current by `middleware`
        name = f"{call.method} {call.tool}" if call.tool else call.method
        attributes: dict[str, Any] = {"mcp.method.name": call.method}
        if call.tool:
            attributes["gen_ai.tool.name"] = call.tool
        session_id = getattr(call.peer, "session_id", None)
        if session_id:
            attributes["mcp.session.id"] = session_label(session_id)
        call.span = self.tracer.start_span(
            name, context=parent, kind=self.server_kind, attributes=attributes
        )

    def end(self, call: Call, seconds: float) -> None:
        span = call.span
        if span is None:
            return
        relayed = call.relay_span
        outcome = "error" if call.error is not None else ("tool_error" if call.failed else "ok")
        if relayed is not None:
            relayed.set_attribute("mcp.outcome", outcome)
            relayed.end()
        span.set_attribute("mcp.outcome", outcome)
        if outcome != "ok":
            span.set_status(self.error_status)
        span.end()

    # -- the gateway's relay ----------------------------------------------------------
    def relayed(self, call: Call, child: str, tool: str, ctx: Any) -> None:
        """A span for the relayed call, and its context in the child's `_meta`."""
        if call.span is None or call.method != TOOLS_CALL:
            return
        parent = self.trace.set_span_in_context(call.span)
        span = self.tracer.start_span(
            f"relay {child}",
            context=parent,
            kind=self.trace.SpanKind.CLIENT,
            attributes={"mcp.gateway.child": child, "gen_ai.tool.name": tool},
        )
        call.relay_span = span
        carrier: dict[str, str] = {}
        self.propagator.inject(carrier, context=self.trace.set_span_in_context(span))
        meta = dict(ctx.meta) if ctx.meta else {}
        meta.pop(TRACESTATE, None)
        meta.update(carrier)
        ctx.meta = meta

    def child_span(self, call: Call, name: str, attributes: dict[str, Any]) -> Any:
        """A span under the request's, current while the `with` block runs."""
        parent = self.trace.set_span_in_context(call.span)
        return self.tracer.start_as_current_span(name, context=parent, attributes=attributes)

    # -- HTTP: the request's traceparent header -------------------------------------
    def middleware(self) -> Any:
        from aiohttp import web

        extract, attach, detach = self.propagator.extract, self.context.attach, self.context.detach

        @web.middleware
        async def traced(request: web.Request, handler: Handler) -> web.StreamResponse:
            if TRACEPARENT not in request.headers:
                return await handler(request)
            token = attach(extract(request.headers))
            try:
                return await handler(request)
            finally:
                detach(token)

        return traced
