"""The observation tests use the HTTP tests' server launcher and the scale tests' Redis."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "http"))  # http_process, http_helpers
sys.path.insert(0, str(TESTS / "scale"))  # scale_setup (Redis)
