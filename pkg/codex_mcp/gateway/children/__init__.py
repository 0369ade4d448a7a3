"""The supervision of one child server: its process or HTTP connection (`connection.py`,
`lifetime.py` for the process group and the watchdog), its states as a transition table
(`states.py`), its restarts, logins and idle stops (`child.py`), its tool listing as served
(`tools.py`) and the last good one kept on disk (`listing_cache.py`). It imports nothing of
the routing, the relay or the gateway's top; what a child sends goes to its host."""
