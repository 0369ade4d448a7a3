"""The gateway's configuration: everything it is told before it serves, and nothing else
(its modules: specs/gateway.md, "Configuration"). It imports nothing of the gateway's
runtime (children, routing, relay); they import it."""
