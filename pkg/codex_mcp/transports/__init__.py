"""Transports: they move bytes and feed decoded messages to a core session."""
