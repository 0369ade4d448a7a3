"""A server for the hidden-as-unknown test: one open and one secret thing of every kind a
request can name (a tool, a resource with a completable argument, a prompt with one, a skill
with a file in a subfolder); the policy there hides every secret one. And a tool whose name
a gateway serves repaired, for the rules by served names."""

from __future__ import annotations

from codex_mcp import Server

server = Server("policy-hideable")

for prefix in ("open", "secret"):
    server.add_skill(
        f"{prefix}-skill",
        f"The {prefix} skill",
        f"# {prefix}\n\nthe {prefix} instructions",
        files={"notes/extra.md": f"the {prefix} notes"},
    )
    server.add_completion("prompt", f"{prefix}_prompt", "topic", lambda value: ["alpha"])
    server.add_completion("resource", f"mem://{prefix}", "part", lambda value: ["one"])


@server.tool()
def open_tool() -> str:
    return "called open_tool"


@server.tool()
def secret_tool() -> str:
    return "called secret_tool"


@server.tool(name="toggle-simulated-logging")
def toggle() -> str:
    """A name the gateway serves repaired (`kid__toggle_simulated_logging`)."""
    return "called toggle-simulated-logging"


@server.resource("mem://open", name="open")
def open_note() -> str:
    return "the open note"


@server.resource("mem://secret", name="secret")
def secret_note() -> str:
    return "the secret note"


@server.prompt()
def open_prompt(topic: str) -> str:
    return f"open {topic}"


@server.prompt()
def secret_prompt(topic: str) -> str:
    return f"secret {topic}"


if __name__ == "__main__":
    server.run()
