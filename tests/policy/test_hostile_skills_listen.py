"""Skills and 2026-07-28 listens under the policy (specs/policy.md, "Skills", "Listens"):
a policy that hides a skill's SKILL.md hides the skill whole, in every way a client can
name it: not in skills/list nor resources/list, skills/get and resources/directory/read of
it answered exactly as for a skill or folder that does not exist, none of its files
readable by its own URI; a `subscriptions/listen` naming a hidden resource (or a hidden
skill's file) is acknowledged as one naming an unknown URI, and no update of it reaches a
listener. Real processes on
127.0.0.1: `codex-mcp-http` serving the skilled child, and a gateway of it; our client
over Streamable HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codex_mcp.client import Client, McpError
from support.polling import until
from support.processes import HttpProcess

from .policy_helpers import gateway_server, write_policy

SKILLED = Path(__file__).parent / "servers" / "skilled.py"
MODERN = "2026-07-28"

#: Hides one skill (by its SKILL.md URI only) and one resource; the rule names the
#: child's own URIs, so it holds behind the gateway too.
HIDING = {
    "default": "allow",
    "rules": [
        {
            "effect": "deny",
            "kind": "resource",
            "tool": ["skill://secret-skill/SKILL.md", "mem://hidden"],
        }
    ],
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HttpProcess]]:
    directory = tmp_path_factory.mktemp("skills-listen")
    policy = write_policy(directory, HIDING)
    plain = HttpProcess("--serve", str(SKILLED), "--policy", str(policy))
    try:
        gateway = gateway_server(directory, policy, {"kid": {}}, child=SKILLED)
    except BaseException:
        plain.stop()
        raise
    yield {"plain": plain, "gateway": gateway}
    plain.stop()
    gateway.stop()


def nowhere(kind: str, own: str) -> str:
    """A URI that names nothing: on the plain server one it does not serve, behind the
    gateway one no child's namespace holds (the gateway's own answer; one in a child's
    namespace gets the child's answer, relayed with the child's wording, which the
    policy does not imitate: specs/policy.md, "Skills")."""
    if kind == "plain":
        return own
    scheme, rest = own.split("://", 1)
    return f"{scheme}://nokid/{rest}"


def uri(kind: str, own: str) -> str:
    """The URI a client of `kind` uses for the child's `own` one."""
    if kind == "plain":
        return own
    scheme, rest = own.split("://", 1)
    return f"{scheme}://kid/{rest}"


async def _client(server: HttpProcess, kind: str, mode: str) -> Client:
    client = Client.http(server.url, mode=mode, timeout=30)
    await client.connect()
    if kind == "gateway":  # the child starts in the background: wait for its resources

        async def up() -> bool:
            listed = await client.request("resources/list", {})
            return any(r["uri"] == uri(kind, "mem://watched") for r in listed["resources"])

        await until(up, 30, "the gateway's child listed")
    return client


async def _error(client: Client, method: str, params: dict[str, Any]) -> McpError:
    with pytest.raises(McpError) as caught:
        await client.request(method, params)
    return caught.value


def _same_refusal(hidden: McpError, unknown: McpError, hidden_uri: str, unknown_uri: str) -> None:
    """Answered as the unknown one is, but for the URI it names."""
    assert hidden.code == unknown.code, (hidden, unknown)
    assert str(hidden).replace(hidden_uri, "U") == str(unknown).replace(unknown_uri, "U"), (
        hidden,
        unknown,
    )
    assert "secret" not in str(hidden).replace(hidden_uri, "U"), hidden


@pytest.mark.parametrize("mode", ["legacy", MODERN])
@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_a_hidden_skill_is_hidden_whole(
    served: dict[str, HttpProcess], kind: str, mode: str
) -> None:
    client = await _client(served[kind], kind, mode)
    try:
        secret = uri(kind, "skill://secret-skill/SKILL.md")
        visible = uri(kind, "skill://open-skill/SKILL.md")
        skills = [s["uri"] for s in (await client.request("skills/list", {}))["skills"]]
        assert skills == [visible], skills
        resources = [r["uri"] for r in (await client.request("resources/list", {}))["resources"]]
        assert visible in resources and uri(kind, "mem://watched") in resources, resources
        assert not [r for r in resources if "secret" in r or "hidden" in r], resources

        # skills/get: as for a skill that does not exist.
        assert (await client.request("skills/get", {"uri": visible}))["skill"]["uri"] == visible
        unknown = nowhere(kind, "skill://no-skill/SKILL.md")
        _same_refusal(
            await _error(client, "skills/get", {"uri": secret}),
            await _error(client, "skills/get", {"uri": unknown}),
            secret,
            unknown,
        )
        # resources/directory/read of its folder and subfolder: as for no such folder.
        opened = await client.request(
            "resources/directory/read", {"uri": uri(kind, "skill://open-skill")}
        )
        assert uri(kind, "skill://open-skill/notes") in str(opened), opened
        for folder in ("skill://secret-skill", "skill://secret-skill/notes"):
            hidden_folder, nothing = uri(kind, folder), nowhere(kind, "skill://no-skill")
            _same_refusal(
                await _error(client, "resources/directory/read", {"uri": hidden_folder}),
                await _error(client, "resources/directory/read", {"uri": nothing}),
                hidden_folder,
                nothing,
            )
        # Its files, by their own URIs (the rule names only SKILL.md): not readable.
        assert "the open-skill notes" in str(
            await client.request(
                "resources/read", {"uri": uri(kind, "skill://open-skill/notes/extra.md")}
            )
        )
        for own in ("skill://secret-skill/SKILL.md", "skill://secret-skill/notes/extra.md"):
            refused = await _error(client, "resources/read", {"uri": uri(kind, own)})
            assert "the secret-skill" not in str(refused), refused
    finally:
        await client.aclose()


@pytest.mark.parametrize("kind", ["plain", "gateway"])
async def test_a_listen_naming_a_hidden_resource_hears_nothing_of_it(
    served: dict[str, HttpProcess], kind: str
) -> None:
    """It is acknowledged as one naming an unknown URI is (test_hostile_hidden_as_unknown.py
    compares the two), and follows nothing hidden: both resources change every 0.2 s, the
    watched one's updates come, the hidden one's (or a hidden skill's file's) never."""
    client = await _client(served[kind], kind, MODERN)
    hidden, watched = uri(kind, "mem://hidden"), uri(kind, "mem://watched")
    secret_file = uri(kind, "skill://secret-skill/notes/extra.md")
    try:
        async with client.listen(resource_uris=[watched, hidden, secret_file]) as events:
            assert events.acknowledged["resourceSubscriptions"] == sorted([watched, hidden, secret_file])  # fmt: skip
            for _ in range(6):
                method, params = await events.next(15)
                assert (method, params["uri"]) == ("notifications/resources/updated", watched)
    finally:
        await client.aclose()
