"""The driver against the real Codex app-server and the fake model: turns, threads, events,
approvals, interrupts, a dying app-server."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from codex_mcp.codex.connection import StdioConnection
from codex_mcp.codex.driver import CodexDriver
from codex_mcp.codex.errors import (
    ApprovalDeclined,
    AppServerGone,
    AppServerRequestFailed,
    TurnFailed,
    TurnInterrupted,
    UnknownThread,
)
from codex_mcp.codex.protocol import ApprovalDetails, ApprovalKind, ThreadOptions
from codex_mcp.codex.run import CodexEvent
from interop import fake_responses_provider as fake
from interop.fake_responses_provider import FakeProvider

from .conftest import codex_env, needs_codex

pytestmark = [pytest.mark.interop, needs_codex]

Model = tuple[FakeProvider, int]
#: Commands need approval; read-only sandbox (the fake model asks to escalate anyway).
_ASK = {"approval_policy": "on-request", "sandbox": "read-only"}


async def test_a_turn_returns_the_models_answer_and_a_thread_id(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    result = await driver.codex("what is two plus two", ThreadOptions(cwd=str(workdir)))
    assert result.content == "You said: what is two plus two"
    assert result.thread_id in driver.threads
    assert result.turn_id


async def test_options_reach_the_model(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.say("ok")
    options = ThreadOptions(
        cwd=str(workdir),
        model="another-fake-model",
        base_instructions="BASE-INSTRUCTIONS-7f3",
        developer_instructions="DEVELOPER-INSTRUCTIONS-9c1",
        compact_prompt="COMPACT-PROMPT-2d8",
        config={"model_reasoning_summary": "none"},
    )
    await driver.codex("hello", options)
    body = provider.requests[-1]
    assert body["model"] == "another-fake-model"
    # Base instructions travel in `instructions` (older Codex) or as the first input message.
    text = str(body.get("instructions")) + str(body["input"])
    assert "BASE-INSTRUCTIONS-7f3" in text
    assert "DEVELOPER-INSTRUCTIONS-9c1" in text
    assert str(workdir) in text  # the environment context names the thread's cwd


async def test_a_reply_continues_the_thread(driver: CodexDriver, fake_model: Model) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    first = await driver.codex("remember the word avocado")
    second = await driver.reply(first.thread_id, "which word did I ask you to remember?")
    assert second.thread_id == first.thread_id
    assert second.content == "You said: which word did I ask you to remember?"
    # The model's second request carries the whole first turn.
    last = provider.requests[-1]
    assert fake.user_texts(last) == [
        "remember the word avocado",
        "which word did I ask you to remember?",
    ]
    assert fake.assistant_texts(last) == ["You said: remember the word avocado"]


async def test_a_reply_to_an_unknown_thread_is_refused(driver: CodexDriver) -> None:
    with pytest.raises(UnknownThread, match="Session not found for thread_id: nope"):
        await driver.reply("nope", "hello")


async def test_events_stream_in_order_through_the_callback(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.say("streamed")
    events: list[CodexEvent] = []
    result = await driver.codex("hi", on_event=events.append)
    methods = [event.method for event in events]
    assert methods[0] == "thread/started"
    assert methods[-1] == "turn/completed"
    assert methods.index("turn/started") < methods.index("item/completed")
    assert {event.thread_id for event in events} == {result.thread_id}
    messages = [
        event.params["item"]["text"]
        for event in events
        if event.method == "item/completed" and event.params["item"]["type"] == "agentMessage"
    ]
    assert messages == ["streamed"]


async def test_two_threads_run_at_once_and_keep_their_events_apart(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.echo_prompt()
    seen: dict[str, list[CodexEvent]] = {"a": [], "b": []}
    a, b = await asyncio.gather(
        driver.codex("prompt a", on_event=seen["a"].append),
        driver.codex("prompt b", on_event=seen["b"].append),
    )
    assert (a.content, b.content) == ("You said: prompt a", "You said: prompt b")
    assert a.thread_id != b.thread_id
    assert {event.thread_id for event in seen["a"]} == {a.thread_id}
    assert {event.thread_id for event in seen["b"]} == {b.thread_id}


class Approvals:
    """An approver that records what it was asked and answers as told."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[ApprovalKind, ApprovalDetails]] = []

    async def __call__(self, kind: ApprovalKind, details: ApprovalDetails) -> bool:
        self.asked.append((kind, details))
        return self.answer


async def test_an_approved_command_runs(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo approved > made.txt && echo done")
    approvals = Approvals(True)
    options = ThreadOptions(cwd=str(workdir), **_ASK)
    result = await driver.codex("make the file", options, approve=approvals)
    assert (workdir / "made.txt").read_text() == "approved\n"
    [(kind, details)] = approvals.asked
    assert kind == "command"
    assert details.command is not None and "echo approved > made.txt" in details.command
    assert details.cwd == str(workdir)
    assert details.reason == "The test needs this command"
    assert details.thread_id == result.thread_id
    assert "done" in result.content  # the model saw the command's output


async def test_a_declined_command_does_not_run_and_the_call_fails(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo declined > made.txt")
    approvals = Approvals(False)
    options = ThreadOptions(cwd=str(workdir), **_ASK)
    with pytest.raises(ApprovalDeclined) as caught:
        await driver.codex("make the file", options, approve=approvals)
    assert len(approvals.asked) == 1
    assert not (workdir / "made.txt").exists()
    assert "the client declined" in caught.value.message
    assert "echo declined > made.txt" in caught.value.message
    assert caught.value.thread_id in driver.threads
    assert len(provider.requests) == 1  # the turn stopped: the model was not asked again


async def test_without_an_approver_a_command_is_refused(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo nobody > made.txt")
    with pytest.raises(ApprovalDeclined, match="nobody can approve"):
        await driver.codex("make the file", ThreadOptions(cwd=str(workdir), **_ASK))
    assert not (workdir / "made.txt").exists()


async def test_an_approver_that_fails_or_hangs_is_a_refusal(
    codex_home: Path, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    provider.responder = fake.run_command("echo late > made.txt")
    driver = await CodexDriver.spawn(env=codex_env(codex_home), approval_timeout=0.5)
    try:

        async def broken(kind: ApprovalKind, details: ApprovalDetails) -> bool:
            raise RuntimeError("the approval UI crashed")

        with pytest.raises(ApprovalDeclined, match=r"could not be asked.*UI crashed"):
            await driver.codex("go", ThreadOptions(cwd=str(workdir), **_ASK), approve=broken)

        cancelled = asyncio.Event()

        async def never(kind: ApprovalKind, details: ApprovalDetails) -> bool:
            try:
                await asyncio.Event().wait()
            finally:
                cancelled.set()
            return True

        with pytest.raises(ApprovalDeclined, match=r"no answer came within 0\.5 s"):
            await driver.codex("go", ThreadOptions(cwd=str(workdir), **_ASK), approve=never)
        await asyncio.wait_for(cancelled.wait(), 5)  # the question was withdrawn
        assert not (workdir / "made.txt").exists()
    finally:
        await driver.close()


async def test_a_patch_needing_approval_is_described_and_applied(
    driver: CodexDriver, fake_model: Model, workdir: Path
) -> None:
    provider, _ = fake_model
    patch = "*** Begin Patch\n*** Add File: patched.txt\n+patched line\n*** End Patch"
    provider.responder = fake.run_command(f"apply_patch <<'EOF'\n{patch}\nEOF")
    approvals = Approvals(True)
    await driver.codex("patch it", ThreadOptions(cwd=str(workdir), **_ASK), approve=approvals)
    [(kind, details)] = approvals.asked
    assert kind == "patch"
    assert details.changes == [
        {"path": str(workdir / "patched.txt"), "kind": {"type": "add"}, "diff": "patched line\n"}
    ]
    assert (workdir / "patched.txt").read_text() == "patched line\n"


async def test_an_interrupt_stops_a_stalled_turn_promptly(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    call = asyncio.create_task(driver.codex("never ends"))
    await asyncio.wait_for(provider.stalled.wait(), 30)
    [thread_id] = driver.threads
    started = time.monotonic()
    assert await driver.interrupt(thread_id)
    with pytest.raises(TurnInterrupted, match="interrupted"):
        await asyncio.wait_for(call, 10)
    assert time.monotonic() - started < 5
    # The thread is free again and goes on.
    provider.responder = fake.echo_prompt()
    again = await driver.reply(thread_id, "still there?")
    assert again.content == "You said: still there?"


async def test_cancelling_a_call_interrupts_its_turn(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    call = asyncio.create_task(driver.codex("never ends"))
    await asyncio.wait_for(provider.stalled.wait(), 30)
    [thread_id] = driver.threads
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    provider.responder = fake.echo_prompt()
    # The next turn waits for the interrupted one to end, then runs; had the stalled turn
    # not been interrupted, it would still hold the thread (ThreadBusy after 10 s).
    started = time.monotonic()
    again = await driver.reply(thread_id, "next")
    assert again.content == "You said: next"
    assert time.monotonic() - started < 5


async def test_a_second_turn_on_a_busy_thread_waits_for_the_first(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    first = asyncio.create_task(driver.codex("never ends"))
    await asyncio.wait_for(provider.stalled.wait(), 30)
    [thread_id] = driver.threads
    provider.responder = fake.echo_prompt()
    second = asyncio.create_task(driver.reply(thread_id, "me next"))
    await asyncio.sleep(0.5)
    assert not second.done()
    assert len(provider.requests) == 1  # it did not steer the running turn
    await driver.interrupt(thread_id)
    with pytest.raises(TurnInterrupted):
        await first
    result = await asyncio.wait_for(second, 30)
    assert result.content == "You said: me next"


async def test_a_failing_turn_says_why(driver: CodexDriver, fake_model: Model) -> None:
    provider, _ = fake_model
    provider.responder = fake.refuse("the fake model is out of order")
    with pytest.raises(TurnFailed, match="the fake model is out of order") as caught:
        await driver.codex("hello")
    assert caught.value.thread_id in driver.threads


async def test_a_bad_option_is_refused_by_app_server(driver: CodexDriver) -> None:
    with pytest.raises(AppServerRequestFailed, match=r"thread/start.*bogus"):
        await driver.codex("hello", ThreadOptions(approval_policy="bogus"))


async def test_a_killed_app_server_fails_the_running_call_at_once(
    driver: CodexDriver, fake_model: Model
) -> None:
    provider, _ = fake_model
    provider.responder = fake.stall()
    call = asyncio.create_task(driver.codex("never ends"))
    await asyncio.wait_for(provider.stalled.wait(), 30)
    assert isinstance(driver.connection, StdioConnection)
    pid = driver.connection.pid
    assert pid is not None
    started = time.monotonic()
    # The group: under Node < 22.15 the npm `codex` is a Node wrapper around the native one.
    os.killpg(pid, signal.SIGKILL)
    with pytest.raises(AppServerGone, match="SIGKILL"):
        await asyncio.wait_for(call, 5)
    assert time.monotonic() - started < 3
    with pytest.raises(AppServerGone):
        await driver.codex("anyone?")
