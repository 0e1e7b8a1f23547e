"""How one call of a tool of ``hippo mcp`` is checked and run.

A tool (:class:`~hippo_core.plugins.tools.Tool`) is a name, one sentence, a pydantic model
of its arguments and a function; plugins register tools through ``hippo_register_tools``
whether or not the MCP SDK is installed: nothing here imports it. :func:`call` is the whole
life of one call, and it never raises: an argument the model refuses, an unknown tool, a
:class:`~hippo_core.base.errors.HippoError` or any other exception comes back as an error
:class:`Outcome` of one line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from hippo_core.agents.deciders import CALLER
from hippo_core.base.errors import HippoError, UsageError
from hippo_core.plugins.tools import Tool

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

#: The most a call's arguments may weigh, as JSON; each model bounds its strings too.
MAX_ARGUMENT_BYTES = 1_000_000
#: A name or value quoted in an error is cut to this many characters.
SHOWN = 80


@dataclass(frozen=True)
class Outcome:
    """What one call gave: its text, the data behind it (an object, or None) and whether
    it is an error."""

    text: str
    data: dict[str, Any] | None = None
    error: bool = False


def call(
    tools: Mapping[str, Tool],
    name: str,
    arguments: object,
    start: str,
    caller: dict[str, str] | None = None,
) -> Outcome:
    """Run tool ``name`` with ``arguments`` in the workspace at or above ``start``, opened
    for this call alone (notes and settings may have changed since the last one).
    ``caller`` (the client and transport) is what a tool that records who acted reads,
    through :data:`CALLER`."""
    token = CALLER.set(caller)
    try:
        return _call(tools, name, arguments, start)
    finally:
        CALLER.reset(token)


def _call(tools: Mapping[str, Tool], name: str, arguments: object, start: str) -> Outcome:
    try:
        tool = tools.get(name)
        if tool is None:
            raise UsageError(
                f"unknown tool {_shown(name)}; the tools are {', '.join(sorted(tools))}"
            )
        given = parse_arguments(tool, arguments)
        from hippo_core.workspace.folder import Workspace

        workspace = Workspace.find(start)
        for line in workspace.loaded.warnings:
            sys.stderr.write(f"hippo mcp: warning: {line}\n")
        try:
            value = tool.run(workspace, given)
        finally:
            _close(workspace)
        return _outcome(value)
    except HippoError as exc:
        return Outcome(_one_line(str(exc)), error=True)
    except Exception as exc:  # a tool's bug: said in one line, and the server goes on
        return Outcome(_one_line(f"{type(exc).__name__}: {exc}"), error=True)


def parse_arguments(tool: Tool, arguments: object) -> BaseModel:
    """``arguments`` checked against the tool's model; one line naming the argument if not."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise UsageError(f"{tool.name}: the arguments must be a JSON object")
    size = len(json.dumps(arguments, ensure_ascii=False).encode("utf-8", "replace"))
    if size > MAX_ARGUMENT_BYTES:
        raise UsageError(
            f"{tool.name}: the arguments are {size} bytes of JSON; at most "
            f"{MAX_ARGUMENT_BYTES} are taken"
        )
    try:
        return tool.arguments.model_validate(arguments)
    except ValidationError as exc:
        raise UsageError(f"{tool.name}: {_problem(tool, exc)}") from None


def _problem(tool: Tool, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    where = _where(first["loc"])
    if first["type"] == "missing":
        said = f"argument {where} is missing"
    elif first["type"] == "extra_forbidden" and len(first["loc"]) == 1:
        takes = ", ".join(tool.arguments.model_fields) or "no arguments"
        said = f"unknown argument {where}; {tool.name} takes {takes}"
    else:
        message = str(first["msg"])
        said = f"argument {where}: {message[:1].lower()}{message[1:]}"
    more = len(errors) - 1
    return said + (f" (and {more} more problem{'s' * (more != 1)})" if more else "")


def _where(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return _shown(path)


def _outcome(value: object) -> Outcome:
    if isinstance(value, str):
        return Outcome(_text(value))
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    # JSON keeps a text in one string, but writes NEL, U+2028 and U+2029 as they are, and
    # a reader may break a line there: a fragment's words would start a line of their own
    # and pass for the view's (issue 37, F10). Escaped, it is the same JSON.
    text = text.translate(_LINE_BREAKS)
    return Outcome(_text(text), value if isinstance(value, dict) else None)


_LINE_BREAKS = {code: f"\\u{code:04x}" for code in (0x85, 0x2028, 0x2029)}


def _text(text: str) -> str:
    # A lone surrogate (from a transcript) cannot be written as UTF-8 on the wire.
    return text.encode("utf-8", "replace").decode("utf-8")


def _one_line(text: str) -> str:
    return _text(" ".join(text.split()) or "the tool failed without a message")


def _shown(value: str) -> str:
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "...")


def _close(workspace: Workspace) -> None:
    """Close the notes indexes the call opened: a server lives long, calls are many."""
    for name in ("notes_index", "terms_index"):
        index = workspace.__dict__.get(name)
        if index is not None:
            index.conn.close()
