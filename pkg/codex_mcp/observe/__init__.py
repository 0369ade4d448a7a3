"""What a server reports about itself: Prometheus metrics, the audit log, the status page,
refused requests in the log, and OpenTelemetry spans (specs/observability.md lists the modules)."""
