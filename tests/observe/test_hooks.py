"""Observation reaches the gateway's relay through its explicit hook (observe/hooks.py,
decision 55), not by replacing the relay's functions: the serving code a reader sees is
the code that runs, observed or not. What the hook reports (the child's name in the
metrics and the audit log, the relay span) is asserted over real children in
test_metrics.py and test_tracing.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codex_mcp.gateway.config.load import read_config
from codex_mcp.gateway.relay import calls as relay
from codex_mcp.gateway.serve import build_core
from codex_mcp.observe.enable import Observed, RelayWatch, observe
from codex_mcp.observe.hooks import CodexTurnHooks, RelayHooks
from observe_helpers import ROOT


async def test_the_gateway_is_observed_through_its_hook_not_a_replaced_function(
    tmp_path: Path,
) -> None:
    kid = {"command": sys.executable, "args": [str(ROOT / "cmd/mcp"), "--serve", "echo"]}
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"kid": kid}}))
    core = build_core(read_config(config))
    provider = core.provider  # the gateway's (the policy is an extension, not a wrapper)
    assert isinstance(provider, RelayHooks) and not isinstance(provider, CodexTurnHooks)
    assert provider.relay_observer is None  # unobserved: the hook is a None check
    relay_functions = dict(vars(relay))
    observed = observe(core, metrics=True)
    assert observed is not None
    assert isinstance(provider.relay_observer, RelayWatch)
    assert provider.relay_observer.tracing is None  # no tracer configured here
    assert vars(relay) == relay_functions  # nothing of the relay's module replaced
    assert observe(core, metrics=True) is observed  # once per core
    assert core.extension(Observed) is observed  # an extension of the core, not an attribute
    await core.aclose()
