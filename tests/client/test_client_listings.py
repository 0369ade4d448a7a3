"""Every list method of the client answers in one shape: a `Page` (a list) of typed items
(`Tool`, `Resource`, `ResourceTemplate`, `Prompt`) with `next_cursor` where the server gave
one and the server's `raw` JSON. Against real servers over stdio: our library server
(page size 2, so paging is real, in both eras), server-everything, and a server whose
listings are out of shape."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from client_helpers import EVERYTHING, SERVERS, needs_everything
from codex_mcp.client import (
    Client,
    Page,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
)
from codex_mcp.client.paging import MAX_PAGES

ROOT = Path(__file__).resolve().parents[2]
LIBRARY_SERVER = [sys.executable, str(ROOT / "tests" / "server" / "servers" / "library_server.py")]
ODD_SERVER = [sys.executable, str(SERVERS / "odd_listings.py")]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_resources_page_by_page(mode: str) -> None:
    async with Client.stdio(LIBRARY_SERVER, mode=mode) as client:
        first = await client.list_resources()
        assert isinstance(first, Page) and isinstance(first, list)
        assert all(isinstance(r, Resource) for r in first)
        assert [r.uri for r in first] == ["config://app", "config://limits"]
        assert first.next_cursor is not None
        second = await client.list_resources(first.next_cursor)
        assert [r.uri for r in second] == ["config://owner"] and second.next_cursor is None
        everything = await client.list_resources(all_pages=True)
        assert [r.uri for r in everything] == [*(r.uri for r in first), "config://owner"]
        assert everything.next_cursor is None

        app, limits, owner = everything
        assert (app.name, app.title, app.description, app.mime_type) == (
            "config",
            "App config",
            "The app's settings.",
            "application/json",
        )
        assert (limits.size, limits.mime_type, owner.title, owner.size) == (12, None, None, None)
        assert app.to_json() == app.raw and app.raw["uri"] == "config://app"
        # What callers of the earlier page-of-dicts API read keeps working: `.items`.
        assert first.items == list(first) and first.raw["nextCursor"] == first.next_cursor


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_templates_prompts_and_tools_are_typed(mode: str) -> None:
    async with Client.stdio(LIBRARY_SERVER, mode=mode) as client:
        templates = await client.list_resource_templates(all_pages=True)
        assert templates == [
            ResourceTemplate(
                uri_template="notes://{name}",
                name="note",
                title="A note",
                description="One note by name.",
                mime_type="text/plain",
                raw=templates[0].raw,
            )
        ]

        first = await client.list_prompts()
        assert all(isinstance(p, Prompt) for p in first)
        assert [p.name for p in first] == ["review", "summarize"] and first.next_cursor
        rest = await client.list_prompts(first.next_cursor)
        assert [p.name for p in rest] == ["greet"] and rest.next_cursor is None
        assert rest[0].arguments == []
        review = first[0]
        assert (review.title, review.description) == ("Review", "Review a piece of code.")
        assert [(a.name, a.required) for a in review.arguments] == [
            ("code", True),
            ("language", False),
        ]
        assert all(isinstance(a, PromptArgument) for a in review.arguments)
        assert review.to_json() == review.raw

        tools = await client.list_tools()
        assert isinstance(tools, Page) and tools.next_cursor is None
        assert all(isinstance(t, Tool) for t in tools)


@needs_everything
async def test_server_everything_listings_are_typed() -> None:
    async with Client.stdio([str(EVERYTHING)], timeout=20) as client:
        resources = await client.list_resources(all_pages=True)
        assert resources and all(isinstance(r, Resource) for r in resources)
        assert all(r.uri.startswith("demo://") and r.name for r in resources)
        templates = await client.list_resource_templates()
        assert templates and all(isinstance(t, ResourceTemplate) for t in templates)
        assert all("{" in t.uri_template for t in templates)
        prompts = {p.name: p for p in await client.list_prompts(all_pages=True)}
        city, state = prompts["args-prompt"].arguments
        assert (city.name, city.required, city.description) == ("city", True, "Name of the city")
        assert (state.name, state.required, state.description) == ("state", False, None)
        assert prompts["simple-prompt"].arguments == []


async def test_out_of_shape_listings_cost_only_the_bad_fields() -> None:
    async with Client.stdio(ODD_SERVER) as client:
        # The server repeats its cursor forever: the first page and the page at "again" are
        # each asked for once, then paging stops.
        resources = await client.list_resources(all_pages=True)
        assert resources.next_cursor is None
        assert [r.uri for r in resources] == ["odd://a", "", "odd://a", ""]  # no string
        odd, wrong = (await client.list_resources())[:2]
        assert (odd.uri, odd.size, odd.mime_type, odd.annotations) == ("odd://a", None, None, None)
        assert (wrong.uri, wrong.name, wrong.title, wrong.size) == ("", "", None, 10)
        assert wrong.raw["uri"] == 42  # what the server sent is still there

        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["odd://{x}"]
        assert templates.next_cursor is None  # 5 is no cursor

        p, q = await client.list_prompts()
        assert p.arguments == []
        assert [(a.name, a.required) for a in q.arguments] == [("n", False), ("", False)]

        (tool,) = await client.list_tools()
        assert tool.input_schema == {}


async def test_a_listing_without_end_stops_at_the_page_bound() -> None:
    # Each page brings a cursor never seen before: following them all would never end.
    async with Client.stdio([*ODD_SERVER, "--endless"]) as client:
        async with asyncio.timeout(120):
            resources = await client.list_resources(all_pages=True)
            tools = await client.list_tools()
        for listing in (resources, tools):
            assert len(listing) == MAX_PAGES  # one item a page
            assert listing.next_cursor == str(MAX_PAGES)  # where to go on from, if wanted
        assert resources[-1].uri == f"odd://{MAX_PAGES - 1}"
        more = await client.list_resources(resources.next_cursor)
        assert [r.uri for r in more] == [f"odd://{MAX_PAGES}"]
