"""The policy's enforcement point stands in front of every way into the served provider:
a Provider method it does not define would fall to the base class's default (an empty
listing, a refusal) or, worse for a new way in, reach nothing it decides on. A method added
to Provider must be decided on (or passed through on purpose) here."""

from __future__ import annotations

import inspect

from codex_mcp.core.provider import Provider
from codex_mcp.policy.provider import PolicedProvider

#: Base-class methods that only call other Provider methods (which PolicedProvider defines).
_COMPOSED = {"aclose"}


def test_every_provider_method_is_decided_or_passed_through() -> None:
    public = {
        name
        for name, member in inspect.getmembers(Provider)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }
    missing = sorted(public - _COMPOSED - set(vars(PolicedProvider)))
    assert not missing, f"PolicedProvider does not define {missing}"
