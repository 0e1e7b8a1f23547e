"""What a plugin registers as a tool of ``hippo mcp``: a name, one sentence, a pydantic model
of its arguments and a function (``hippo_register_tools``). The plugin manager checks what
it is handed against :class:`Tool`, so the type sits here, below the MCP server
(:mod:`hippo_core.mcp.tool` checks and runs one call), and nothing here imports the MCP SDK.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

#: What MCP allows in a tool's name.
NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class ToolArguments(BaseModel):
    """The base of a tool's arguments: unknown keys are refused, and nothing is coerced (a
    number given as a string is an error, as its schema says)."""

    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True)
class Tool:
    """A tool: ``run(workspace, arguments)`` returns text, or data sent as JSON.

    ``arguments`` is a subclass of :class:`Arguments`; each field's ``description`` is what
    the agent reads about it, and its bounds (``max_length``, ``le``) are checked before
    ``run`` is called.
    """

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Workspace, Any], object]

    def __post_init__(self) -> None:
        if not NAME.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r}: use letters, digits, _ . and - only")
        if not self.description.strip():
            raise ValueError(f"tool {self.name!r} has no description")

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as the agent receives it."""
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return schema
