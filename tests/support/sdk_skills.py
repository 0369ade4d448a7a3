"""The Skills extension's requests for the official MCP SDK client, which has none of its
own: skills/list, skills/get and resources/directory/read as its request types, sent with
`session.send_request(request, raw)`."""

from __future__ import annotations

from typing import Any, Literal


def sdk_requests() -> tuple[Any, Any, Any, Any]:
    """skills/list, skills/get and resources/directory/read as the SDK's request types
    (it has none of its own), and a raw result type."""
    import mcp_types as types
    from pydantic import TypeAdapter

    class ListSkills(types.Request[types.PaginatedRequestParams | None, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"
        params: types.PaginatedRequestParams | None = None

    class UriParams(types.RequestParams):
        uri: str

    class GetSkill(types.Request[UriParams, Literal["skills/get"]]):
        method: Literal["skills/get"] = "skills/get"
        params: UriParams

    class ReadDirectory(types.Request[UriParams, Literal["resources/directory/read"]]):
        method: Literal["resources/directory/read"] = "resources/directory/read"
        params: UriParams

    def get(uri: str) -> GetSkill:
        return GetSkill(params=UriParams(uri=uri))

    def read_directory(uri: str) -> ReadDirectory:
        return ReadDirectory(params=UriParams(uri=uri))

    return ListSkills, get, read_directory, TypeAdapter(dict[str, Any])
