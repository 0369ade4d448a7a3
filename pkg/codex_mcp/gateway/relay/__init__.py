"""A front request sent on to its child and answered from the child's answer: the front
request built once (`front.py`), the hot path and the one awaited request (`calls.py`), which
call a child's message belongs to (`attribution.py`), 2025-11-25 tasks (`front_tasks.py`, its
handle table `task_handles.py`), subscriptions and listens (`subscriptions.py`), skills
(`skills.py`). A child's revision is its channel's (children/channel.py). It imports the
children below it, never the routing or the gateway's top."""
