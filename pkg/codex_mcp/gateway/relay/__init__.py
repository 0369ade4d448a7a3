"""A front request sent on to its child and answered from the child's answer (`calls.py`),
with what the 2026-07-28 revision adds: the envelope (`envelope.py`), a 2026-07-28-only
child's rounds (`stateless.py`) and tasks (`tasks.py`), and the child's questions put to the
client as the front's revision asks them (`questions.py`). It imports the children below
it, never the routing or the gateway's top."""
