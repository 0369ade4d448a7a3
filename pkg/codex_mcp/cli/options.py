"""Command-line flags and --help, written from the declarations in settings.py (specs/
decisions.md, 56): each setting a `--kebab-name` in its group, with its help, its default
and its environment variable. --help never loads pydantic-settings."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from ..launch import OneLineErrors, add_version_flag
from ..settings import (
    ENV_FILE,
    GROUPS,
    SettingsError,
    env_name,
    field_types,
    flag,
    read_settings,
)

D = TypeVar("D")

ENVIRONMENT_NOTE = (
    f"Every option can also be set as an environment variable (shown with it) or in a "
    f"{ENV_FILE} file in the working directory; a flag wins over both."
)


def _shown_default(field: dataclasses.Field[Any]) -> str:
    shown = field.metadata["shown"]
    if shown is not None:
        return str(shown)
    default: Any = field.default
    if default is None or default in ("", ()):
        return "none"
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    if field.name.endswith("_bytes") and default % (1 << 20) == 0:
        return f"{default} ({default >> 20} MiB)"
    return str(default)


def _help(field: dataclasses.Field[Any]) -> str:
    text = (
        f"{field.metadata['help']} Default: {_shown_default(field)}. Env: {env_name(field.name)}."
    )
    return text.replace("%", "%%")  # argparse formats help with %


def build_parser(
    declaration: type[Any],
    prog: str,
    description: str,
    epilog: str | None = None,
    usage: str | None = None,
) -> argparse.ArgumentParser:
    """`usage`: the program's ways to run, one a line, as written (default: PROG [options])."""
    parser = OneLineErrors(
        prog=prog,
        usage=usage or "%(prog)s [options]",
        description=description,
        epilog=f"{ENVIRONMENT_NOTE} {epilog or ''}".strip(),
        argument_default=argparse.SUPPRESS,  # only what is given; the environment fills the rest
        formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=30),
    )
    add_version_flag(parser)
    hints = field_types(declaration)
    fields = dataclasses.fields(declaration)
    for group_name in GROUPS:
        members = [f for f in fields if f.metadata["group"] == group_name]
        if not members:
            continue
        group = parser.add_argument_group(group_name)
        for field in members:
            _add(group, field, hints[field.name])
    return parser


def _kind(hint: Any) -> tuple[str, Any]:
    """How a setting's flag takes its value: ("switch", None) for --x/--no-x, ("choice",
    the choices), ("append", str), or ("one", the type argparse converts the value with)."""
    if hint is bool:
        return "switch", None
    if typing.get_origin(hint) is Literal:
        return "choice", typing.get_args(hint)
    if typing.get_origin(hint) is Sequence:
        return "append", str  # repeated or comma-separated: both add up
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = args[0] if args else hint
    return "one", base if base in (int, float) else str


def _add(group: argparse._ArgumentGroup, field: dataclasses.Field[Any], hint: Any) -> None:
    options: dict[str, Any] = {"help": _help(field), "dest": field.name}
    kind, detail = _kind(hint)
    if kind == "switch":
        options["action"] = argparse.BooleanOptionalAction
    elif kind == "choice":
        options["choices"] = detail  # the help sentence names them
        options["metavar"] = field.metadata["metavar"]
    else:
        if kind == "append":
            options["action"] = "append"
        elif detail is not str:
            options["type"] = detail
        options["metavar"] = field.metadata["metavar"] or _metavar(field.name, detail)
    group.add_argument(flag(field.name), **options)


def plain_flags(declaration: type[Any], argv: Sequence[str]) -> dict[str, Any] | None:
    """What argparse would read from `argv` when every argument is a setting's own flag
    spelled out (`--name value`, `--name=value`, `--name`/`--no-name` for a switch) with a
    value its type takes; None for anything else (--help, --version, an abbreviation, a
    bad value, a value that starts with "-"), which the parser then reads and explains.
    Building the parser of some fifty options is a few milliseconds of every start."""
    hints = field_types(declaration)
    switches: dict[str, tuple[str, bool]] = {}
    valued: dict[str, tuple[str, str, Any]] = {}
    for field in dataclasses.fields(declaration):
        kind, detail = _kind(hints[field.name])
        if kind == "switch":
            switches[flag(field.name)] = (field.name, True)
            switches["--no-" + flag(field.name)[2:]] = (field.name, False)
        else:
            valued[flag(field.name)] = (field.name, kind, detail)
    given: dict[str, Any] = {}
    rest = list(argv)
    while rest:
        name, has_value, value = rest.pop(0).partition("=")
        if name in switches and not has_value:
            dest, on = switches[name]
            given[dest] = on
            continue
        if name not in valued:
            return None
        if not has_value:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        dest, kind, detail = valued[name]
        if kind == "choice":
            if value not in detail:
                return None
            given[dest] = value
        elif kind == "append":
            given.setdefault(dest, []).append(value)
        else:
            try:
                given[dest] = detail(value)
            except ValueError:
                return None
    return given


def _metavar(name: str, kind: Any) -> str:
    if kind is float:
        return "SECONDS"  # every float setting is a duration
    if name.endswith("_bytes"):
        return "BYTES"
    return "N" if kind is int else name.upper()


def parse(
    declaration: type[D],
    argv: Sequence[str] | None,
    prog: str,
    description: str,
    epilog: str | None = None,
    usage: str | None = None,
) -> D:
    """Settings from `argv`, the environment and .env; a bad value exits with status 2
    and a message naming the flag and its variable, as argparse does for its own errors."""
    args = sys.argv[1:] if argv is None else argv
    given = plain_flags(declaration, args)
    if given is None:
        parser = build_parser(declaration, prog, description, epilog, usage)
        given = vars(parser.parse_args(args))
    try:
        return read_settings(declaration, given)
    except SettingsError as exc:
        parser = build_parser(declaration, prog, description, epilog, usage)
        parser.error("; ".join(_explain(name, message) for name, message in exc.problems))


def _explain(name: str, message: str) -> str:
    return f"{flag(name)} / {env_name(name)}: {message}" if name else message
