"""Settings are declared once (codex_mcp.settings) and read the same way everywhere: the
start without pydantic-settings, the full parse (flags over environment over
.env), the HTTP library's defaults and the command line's. --help reads as written for
people: grouped, one sentence per option, its default once, its environment variable."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from codex_mcp.cli.options import build_parser, parse, plain_flags
from codex_mcp.settings import (
    DEFAULTS,
    CommonDefaults,
    HttpDefaults,
    HttpOptions,
    ObserveOptions,
    SendingDefaults,
    SettingsError,
    StdioDefaults,
    configured_by_environment,
    read_settings,
)
from codex_mcp.transports.http import HttpConfig

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _unconfigure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for key in list(os.environ):
        if key.upper().startswith("CODEX_MCP_"):
            monkeypatch.delenv(key)


def test_nothing_given_reads_as_the_plain_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    assert parse(StdioDefaults, [], "codex-mcp", "") == DEFAULTS
    assert parse(HttpDefaults, [], "codex-mcp-http", "") == HttpDefaults()


def test_the_http_library_and_command_line_share_their_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`server.run("http")` builds HttpConfig(); `codex-mcp-http` parses its flags. Each
    option must come out the same (the shutdown drain was 10 s in one, 5 s in the other)."""
    _unconfigure(monkeypatch, tmp_path)
    from_cli = parse(HttpDefaults, [], "codex-mcp-http", "")
    library = HttpConfig()
    for field in dataclasses.fields(HttpOptions):
        assert getattr(library, field.name) == getattr(from_cli, field.name), field.name


def test_flags_win_over_the_environment_which_wins_over_dotenv(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    (tmp_path / ".env").write_text("CODEX_MCP_PORT=1111\nCODEX_MCP_SESSION_TTL=5\n")
    monkeypatch.setenv("CODEX_MCP_PORT", "2222")
    monkeypatch.setenv("codex_mcp_allowed_hosts", "a.example, b.example")
    settings = parse(HttpDefaults, [], "codex-mcp-http", "")
    assert (settings.port, settings.session_ttl) == (2222, 5.0)
    assert settings.allowed_hosts == ("a.example", "b.example")
    argv = ["--port", "3333", "--allowed-hosts", "c.example,d.example", "--allowed-hosts", "e"]
    settings = parse(HttpDefaults, argv, "codex-mcp-http", "")
    assert settings.port == 3333
    assert settings.allowed_hosts == ("c.example", "d.example", "e")


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (
            ["--port", "99999"],
            "--port / CODEX_MCP_PORT: Input should be less than or equal to 65535",
        ),
        (["--port", "x"], "argument --port: invalid int value"),
        (["--header-timeout", "0"], "--header-timeout / CODEX_MCP_HEADER_TIMEOUT"),
        (["--log-level", "loud"], "argument --log-level: invalid choice"),
        (["--max-message-bytes", "1"], "unrecognized arguments"),  # a stdio setting
    ],
)
def test_a_bad_value_names_its_flag_and_variable(
    argv: list[str], complaint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    result = subprocess.run(
        [sys.executable, str(ROOT / "cmd/http"), *argv], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert complaint in result.stderr


FLAG_SETS = [
    ["--port", "3333", "--allowed-hosts", "c.example, d.example", "--allowed-hosts", "e"],
    ["--audit-log", "audit.jsonl", "--no-metrics", "--session-ttl", "5", "--max-inflight", "1"],
    ["--bearer-token-file", "tokens", "--oauth-scope", "a b,c", "--post-stream", "header"],
    ["--port", "99999"],
    ["--header-timeout", "0", "--max-body-bytes", "10", "--workers", "257"],
]


@pytest.mark.parametrize("argv", FLAG_SETS)
def test_flags_alone_read_as_the_settings_model_reads_them(
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With only flags given the settings are read without pydantic-settings (a faster
    start); the same flags through the model (the environment sets something, here to
    its default) come out the same, and so do their complaints."""

    def outcome() -> object:
        try:
            return parse(HttpDefaults, argv, "codex-mcp-http", "")
        except SystemExit:
            return None

    _unconfigure(monkeypatch, tmp_path)
    assert not configured_by_environment(HttpDefaults)
    plain, plain_error = outcome(), capsys.readouterr().err
    monkeypatch.setenv("CODEX_MCP_LOG_LEVEL", "info")
    assert configured_by_environment(HttpDefaults)
    assert (outcome(), capsys.readouterr().err) == (plain, plain_error)
    assert plain is not None or "Input should be" in plain_error


PLAIN_FLAG_SETS = [
    *FLAG_SETS,
    [],
    ["--port=0", "--host", "::1", "--metrics", "--no-public-metrics"],
    ["--port", "1", "--port", "2"],  # the last one wins
    ["--session-ttl", "1e3", "--workers", "2", "--log-level", "debug"],
    ["--host=a=b", "--allowed-origins", "", "--allowed-origins=x"],
]


@pytest.mark.parametrize("declaration", [HttpDefaults, StdioDefaults])
@pytest.mark.parametrize("argv", PLAIN_FLAG_SETS)
def test_plain_flags_read_what_argparse_reads(argv: list[str], declaration: type) -> None:
    """The start without building the parser reads every flag set it takes exactly as
    argparse does (a set with another command's flag is left to argparse, which refuses it)."""
    parser = build_parser(declaration, "prog", "")
    try:
        expected: object = vars(parser.parse_args(argv))
    except SystemExit:
        expected = None
    assert plain_flags(declaration, argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["--po", "80"],  # an abbreviation: argparse's to accept or refuse
        ["--port"],
        ["--port", "-1"],
        ["--port", "x"],
        ["--port", "1.5"],
        ["--metrics=yes"],
        ["--log-level", "loud"],
        ["--log-level", "--port", "1"],
        ["--", "server"],
        ["server.py"],
        ["-h"],
    ],
)
def test_plain_flags_leave_everything_else_to_argparse(argv: list[str]) -> None:
    assert plain_flags(HttpDefaults, argv) is None


def test_only_real_settings_count_as_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    assert not configured_by_environment()
    monkeypatch.setenv("CODEX_MCP_BENCH_TOOLS", "5")  # read by the builtin server, not a setting
    assert not configured_by_environment()
    monkeypatch.setenv("codex_mcp_log_level", "debug")  # pydantic-settings ignores case
    assert configured_by_environment()
    assert parse(StdioDefaults, [], "codex-mcp", "").log_level == "debug"
    monkeypatch.delenv("codex_mcp_log_level")
    (tmp_path / ".env").write_text("CODEX_MCP_SHUTDOWN_TIMEOUT=1\n")
    assert configured_by_environment()


@pytest.mark.parametrize(
    "argv", [[], ["--serve", "builtin"], ["--help"]], ids=["bare", "serve", "help"]
)
def test_the_stdio_server_starts_without_pydantic_settings(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _unconfigure(monkeypatch, tmp_path)
    command = [sys.executable, "-X", "importtime", str(ROOT / "cmd/mcp"), *argv]
    result = subprocess.run(command, input="", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line
    }
    assert "codex_mcp.cli.stdio" in imported  # the import log is there
    assert not {name for name in imported if name.startswith("pydantic_settings")}


PROGRAMS = [
    ["codex-mcp"],
    ["codex-mcp-http"],
    ["codex-mcp-client"],
    ["codex-mcp-bench"],
    ["codex-mcp-bench", "stdio"],
    ["codex-mcp-bench", "http"],
]
#: What the settings model's own CLI printed: types for metavars, pydantic's default factory.
ARTIFACTS = re.compile(r"\{\w+,null\}|SecretStr|list\[|default factory|\(default: |\bnull\b")


@pytest.mark.parametrize("program", PROGRAMS, ids=" ".join)
def test_help_reads_as_written_for_people(program: list[str]) -> None:
    result = subprocess.run(
        [str(BIN / program[0]), *program[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert not ARTIFACTS.search(text), ARTIFACTS.search(text)
    # Each option says its default once, however the help wraps.
    for block in re.split(r"\n(?=  -)", text):
        assert block.count("Default:") <= 1, block
    for action in re.findall(r"^  (-[-\w]+)", text, re.MULTILINE):
        assert action in text


@pytest.mark.parametrize(
    ("program", "commands"),
    [
        ("codex-mcp", ("--print-codex-config", "codex-mcp lint", "codex-mcp doctor", " -- CMD")),
        ("codex-mcp-http", ("--print-codex-config", " -- CMD")),
    ],
)
def test_help_leads_with_the_commands_people_look_for(
    program: str, commands: tuple[str, ...]
) -> None:
    """Before the settings: the commands, one a line (issue 39: they were in the last lines)."""
    text = subprocess.run(
        [str(BIN / program), "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    lead = text[: text.index("\noptions:")]
    for command in commands:
        assert command in lead, lead
    assert lead.count("\n") <= 16, lead


@pytest.mark.parametrize(
    ("program", "declaration"), [("codex-mcp", StdioDefaults), ("codex-mcp-http", HttpDefaults)]
)
def test_every_setting_is_on_the_help_with_its_default_and_variable(
    program: str, declaration: type
) -> None:
    text = subprocess.run(
        [str(BIN / program), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    options = {
        block.split()[0].rstrip(","): " ".join(block.split())
        for block in re.split(r"\n  (?=-)", text)[1:]
    }
    for field in dataclasses.fields(declaration):
        flag = "--" + field.name.replace("_", "-")
        assert "Default: " in options[flag], flag
        assert f"Env: CODEX_MCP_{field.name.upper()}." in options[flag], flag
    for group in ("Serving", "Limits and timeouts", "Logging"):
        assert f"\n{group}:\n" in text


def test_groups_of_fields_make_no_methods_and_the_settings_cover_every_field() -> None:
    """The groups the settings are built from write no __init__, __repr__ or __eq__ of
    their own (some 2 ms of every start); the settings' own cover every field."""
    for group in (ObserveOptions, CommonDefaults, SendingDefaults, HttpOptions):
        assert not {"__init__", "__repr__", "__eq__"} & set(vars(group)), group
    for settings in (StdioDefaults, HttpDefaults, HttpConfig):
        shown = [field.name for field in dataclasses.fields(settings) if field.repr]
        made = settings()
        assert all(f"{name}=" in repr(made) for name in shown)
        changed = dataclasses.replace(made, audit_arguments=True)
        assert changed != made and changed == dataclasses.replace(made, audit_arguments=True)
        assert hash(changed) == hash(dataclasses.replace(made, audit_arguments=True))


def test_flags_within_their_bounds_are_typed_and_one_outside_is_worded_by_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No second validator: a value within its bounds is only typed; one outside goes to the
    pydantic-settings model, whose words are the complaint."""
    _unconfigure(monkeypatch, tmp_path)
    given = {"port": 0, "allowed_hosts": ["a, b", "c"], "audit_log": "audit.jsonl"}
    settings = read_settings(HttpDefaults, given)
    assert (settings.port, settings.allowed_hosts) == (0, ("a", "b", "c"))
    assert settings.audit_log == Path("audit.jsonl")
    with pytest.raises(SettingsError) as caught:
        read_settings(HttpDefaults, {"port": 65536, "max_sessions": 0})
    assert caught.value.problems == [
        ("port", "Input should be less than or equal to 65535"),
        ("max_sessions", "Input should be greater than or equal to 1"),
    ]
