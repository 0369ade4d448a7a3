"""Command-line flags and --help, written from the declarations in defaults.py.

Each setting becomes `--kebab-name`, in its group, with its one-sentence help, its
default said once and its environment variable. Only flags actually given are
passed on, so the environment and .env still fill in the rest. --help never loads
pydantic-settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from ..defaults import ENV_FILE, GROUPS, env_name, field_types
from ..startup import OneLineErrors, add_version_flag

D = TypeVar("D")

ENVIRONMENT_NOTE = (
    f"Every option can also be set as an environment variable (shown with it) or in a "
    f"{ENV_FILE} file in the working directory; a flag wins over both."
)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _shown_default(field: dataclasses.Field[Any]) -> str:
    shown = field.metadata["shown"]
    if shown is not None:
        return str(shown)
    default: Any = field.default
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
    declaration: type[Any], prog: str, description: str, epilog: str | None = None
) -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog=prog,
        usage="%(prog)s [options]",
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


def _add(group: argparse._ArgumentGroup, field: dataclasses.Field[Any], hint: Any) -> None:
    options: dict[str, Any] = {"help": _help(field), "dest": field.name}
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = args[0] if typing.get_origin(hint) is not Literal and args else hint
    if hint is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif typing.get_origin(hint) is Literal:
        options["choices"] = typing.get_args(hint)  # the help sentence names them
        options["metavar"] = field.metadata["metavar"]
    else:
        if typing.get_origin(hint) is Sequence:
            options["action"] = "append"  # repeated or comma-separated: both add up
        elif base in (int, float):
            options["type"] = base
        elif base is Path:
            options["type"] = str
        options["metavar"] = field.metadata["metavar"] or _metavar(field.name, base)
    group.add_argument(flag(field.name), **options)


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
) -> D:
    """Settings from `argv`, the environment and .env; a bad value exits with status 2
    and a message naming the flag and its variable, as argparse does for its own errors."""
    parser = build_parser(declaration, prog, description, epilog)
    given = vars(parser.parse_args(argv))
    from ..settings import SettingsError, read_settings

    try:
        return read_settings(declaration, given)
    except SettingsError as exc:
        parser.error("; ".join(_explain(name, message) for name, message in exc.problems))


def _explain(name: str, message: str) -> str:
    return f"{flag(name)} / {env_name(name)}: {message}" if name else message
