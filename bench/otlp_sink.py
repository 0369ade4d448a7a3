"""A local OTLP/HTTP trace receiver for the tracing bench case: accepts what an exporter
posts to /v1/traces on 127.0.0.1, counts the spans, and tells how many at GET /stats.

    python bench/otlp_sink.py PORT
"""

import sys

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

STATS = {"exports": 0, "spans": 0, "bytes": 0}
EMPTY = ExportTraceServiceResponse().SerializeToString()


async def traces(request: web.Request) -> web.Response:
    body = await request.read()
    export = ExportTraceServiceRequest()
    export.ParseFromString(body)
    STATS["exports"] += 1
    STATS["bytes"] += len(body)
    STATS["spans"] += sum(
        len(scope.spans) for resource in export.resource_spans for scope in resource.scope_spans
    )
    return web.Response(body=EMPTY, content_type="application/x-protobuf")


async def stats(request: web.Request) -> web.Response:
    return web.json_response(STATS)


app = web.Application(client_max_size=64 * 1024 * 1024)
app.router.add_post("/v1/traces", traces)
app.router.add_get("/stats", stats)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
