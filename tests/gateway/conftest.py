"""The gateway's OAuth tests use the HTTP tests' real authorization server (oauth2-mock-server)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))  # oauth_helpers
