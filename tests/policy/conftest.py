"""The policy tests use the HTTP tests' helpers (the real authorization server)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # oauth_helpers
