"""Client transports, one module each, imported by name (`transports.stdio`, ...): the stdio
transport alone never imports aiohttp (specs/client.md, "Transports")."""
