"""More than one process serving one HTTP endpoint: sessions, streams, tasks and provider
events kept on Redis (`redis_store`, `records`, `writer`, `bus`, `cluster`) so any replica
serves any request, and `--workers N` (`workers`, `worker_link`) on one port. Loaded only with
`--redis-url` or `--workers` (specs/scale.md)."""
