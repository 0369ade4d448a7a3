"""The status page at `/`: one server-rendered HTML page, no script, everything shown escaped
(specs/observability.md, "Status page")."""

from __future__ import annotations

import html
import time
from typing import Any

REFRESH_SECONDS = 5
#: What a browser may do with the operator's pages (this one and the login form): no
#: script, no frames around them, forms to us only, nothing cached.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make our form's Origin "null"
    "X-Content-Type-Options": "nosniff",
}

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#f7f8fa}
h1{font-size:1.3rem;margin:0 0 .2rem}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
.muted{color:#667085}.facts{display:flex;gap:1rem;flex-wrap:wrap;margin:.8rem 0}
.fact{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:.5rem .8rem}
.fact b{display:block;font-size:1.2rem}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #dde1e8;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f5}.state{font-weight:600}
.ready{color:#137333}.starting,.restarting,.idle{color:#a15c00}.failed,.stopped{color:#b3261e}
pre{margin:0;max-height:8rem;overflow:auto;white-space:pre-wrap;font-size:12px}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [f"{days}d"] if days else []
    parts += [f"{hours}h"] if hours or days else []
    return " ".join([*parts, f"{minutes}m", f"{seconds}s"])


def _fact(label: str, value: Any, test_id: str) -> str:
    return f'<div class="fact" data-test="{test_id}">{_e(label)}<b>{_e(value)}</b></div>'


def render(state: dict[str, Any]) -> str:
    facts = [
        _fact("Version", state["version"], "version"),
        _fact("Up", _duration(state["uptime_sec"]), "uptime"),
        _fact("Sessions", state["sessions"], "sessions"),
        _fact("Calls in flight", state.get("calls_in_flight", "-"), "in-flight"),
    ]
    if "codex_app_servers" in state:
        facts.append(_fact("Codex app-servers", state["codex_app_servers"], "app-servers"))
    store = state.get("store")
    if store is not None:
        reachable = "reachable" if store["available"] else "UNREACHABLE"
        facts.append(_fact(f"Redis (replica {store['replica']})", reachable, "store"))
    else:
        facts.append(_fact("Sessions kept", "in this process", "store"))
    sections = [_sessions(state.get("session_list")), _children(state.get("children"))]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{REFRESH_SECONDS}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{_e(state.get("server"))} · codex-mcp status</title><style>{STYLE}</style></head>
<body><h1>{_e(state.get("server"))}</h1>
<div class="muted">codex-mcp {_e(state["version"])} · as of {stamp} · refreshes every {REFRESH_SECONDS} s</div>
<div class="facts">{"".join(facts)}</div>
{"".join(sections)}
</body></html>
"""


def _sessions(sessions: list[dict[str, Any]] | None) -> str:
    if sessions is None:
        return ""
    if not sessions:
        return '<h2>Sessions</h2><p class="muted" data-test="no-sessions">No live sessions.</p>'
    rows = "".join(
        f'<tr data-test="session"><td>{_e(s["session"])}</td><td>{_e(s["client"])}</td>'
        f"<td>{_e(s['protocol'])}</td><td>{_e(s['calls_in_flight'])}</td>"
        f"<td>{_e(_duration(s['idle_sec']))}</td></tr>"
        for s in sessions
    )
    return (
        "<h2>Sessions</h2><table><tr><th>Session</th><th>Client</th><th>Protocol</th>"
        f"<th>Calls in flight</th><th>Idle</th></tr>{rows}</table>"
    )


def _withheld(withheld: list[dict[str, str]] | None) -> str:
    """What pinning keeps from Codex (specs/trust.md), and what to run."""
    said = "; ".join(w["why"] for w in withheld or ())
    return f"{said}: run `codex-mcp trust`" if said else ""


def _children(children: list[dict[str, Any]] | None) -> str:
    if children is None:
        return ""
    rows = "".join(
        f'<tr data-test="child" data-child="{_e(c["name"])}" data-state="{_e(c["state"])}">'
        f"<td>{_e(c['name'])}</td>"
        f'<td class="state {_e(c["state"])}">{_e(c["state"])}</td>'
        f"<td>{_e(c['tools'])}</td><td>{_e(c['restarts'])}</td>"
        f"<td>{_e(_duration(c['uptime_sec']))}</td><td>{_e(c['last_error'] or '')}</td>"
        f'<td data-test="withheld">{_e(_withheld(c.get("withheld")))}</td>'
        f"<td><pre>{_e(c.get('stderr_tail') or '')}</pre></td></tr>"
        for c in children
    )
    return (
        "<h2>Gateway children</h2><table><tr><th>Server</th><th>State</th><th>Tools</th>"
        "<th>Restarts</th><th>Up</th><th>Last error</th><th>Withheld</th>"
        "<th>stderr (tail)</th></tr>"
        f"{rows}</table>"
    )
