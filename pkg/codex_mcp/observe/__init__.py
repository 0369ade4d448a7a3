"""What a server reports about itself: Prometheus metrics, the audit log, the status page,
refused requests in the log, and OpenTelemetry spans.

Everything here hooks into a few seams (the core's method table, the HTTP app's
middleware, the session manager, and the explicit hooks of hooks.py that the gateway's
relay and the Codex provider call), and nothing here runs when it is off:

- dispatch.py   times each request (method, tool, outcome) and tells the sinks
- metrics.py    the Prometheus metrics (multiprocess under --workers), read at a scrape
- plain_metrics.py / call_metrics.py  what is counted while serving: plain numbers until
                scraped (one process), so nothing imports prometheus_client before then
- refusals.py   refused HTTP requests: logged (rate-limited), counted, audited
- audit.py      the audit log (JSON lines)
- state.py      a snapshot of the server (sessions, children, app-servers, Redis)
- status_page.py the HTML status page at /
- hooks.py      the hook points a provider calls (the gateway's relay, a Codex turn)
- relay.py / codex_turns.py  the observers of those hooks
- enable.py     turns the above on for a core, once
- web.py        wires them into the HTTP app; metrics_server.py serves them for stdio
- tracing.py    OpenTelemetry spans and W3C trace context
"""
