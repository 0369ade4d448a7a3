"""A library server with resources, a resource template and prompts, served over stdio with
a page size of 2 so every listing takes more than one page. `notes://{name}` answers
"not found" for a note it does not have the way the library documents: by raising
`ResourceNotFound`."""

from __future__ import annotations

from codex_mcp import Message, ResourceNotFound, Server

NOTES = {"alpha": "first note", "beta": "second note"}

server = Server("library-demo", page_size=2)


@server.resource("notes://{name}", mime_type="text/plain", title="A note")
def note(name: str) -> str:
    """One note by name."""
    if name not in NOTES:
        raise ResourceNotFound(f"notes://{name}")
    return NOTES[name]


@server.resource("config://app", mime_type="application/json", title="App config")
def config() -> dict[str, int]:
    """The app's settings."""
    return {"retries": 3}


@server.resource("config://limits", size=12)
def limits() -> str:
    return "max=10"


@server.resource("config://owner")
def owner() -> str:
    return "ops"


@server.prompt(title="Review")
def review(code: str, language: str = "python") -> list[Message]:
    """Review a piece of code."""
    return [Message("user", f"Review this {language}: {code}")]


@server.prompt
def summarize(text: str) -> str:
    return f"Summarize: {text}"


@server.prompt
def greet() -> str:
    return "Say hello"


if __name__ == "__main__":
    server.run()
