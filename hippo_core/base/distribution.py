"""How hippo is installed and upgraded: the one place every such hint comes from.

The distribution, ``hippo-memory``, is not on the package index yet, so each hint says how
to install from a checkout of hippo's repository (install.md). When it is published, these
two functions are what changes.
"""

from __future__ import annotations

DISTRIBUTION = "hippo-memory"


def install_hint(extra: str = "") -> str:
    """The command that installs hippo with ``extra`` (``mcp``, ``postgres``, ``serve``), and
    where to run it."""
    target = f"'.[{extra}]'" if extra else "."
    return f"pip install -e {target} in hippo's checkout"


def upgrade_hint() -> str:
    """What upgrades hippo."""
    return "git pull and pip install -e . in hippo's checkout"
