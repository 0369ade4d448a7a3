"""What the children offer, merged into one catalog per session (`catalog.py`) under the
gateway's tool names (`naming.py`), and whose children a session uses: shared ones, or its
own per-session ones within the gateway's limits (`sessions.py`). It imports the children
below it, never the relay or the gateway's top."""
