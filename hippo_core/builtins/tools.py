"""hippo's own MCP tools, registered through ``hippo_register_tools`` as a plugin's are.

The tools themselves are in :mod:`hippo_core.mcp.tools`, imported only when ``hippo mcp``
(or whatever lists the tools) asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hippo_core.plugins.manager import hookimpl

if TYPE_CHECKING:
    from hippo_core.plugins.tools import Tool


@hookimpl
def hippo_register_tools(register: Callable[[Tool], None]) -> None:
    from hippo_core.mcp.tools import TOOLS

    for tool in TOOLS:
        register(tool)
