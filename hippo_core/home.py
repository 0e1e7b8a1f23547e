"""``$HIPPO_HOME``: this machine's hippo folder, holding the transcript index.

It defaults to the platform's user data folder for ``hippo`` (``~/.local/share/hippo`` on
Linux, ``~/Library/Application Support/hippo`` on macOS).
"""

from __future__ import annotations

import os
from pathlib import Path


def hippo_home() -> Path:
    """The folder named by ``HIPPO_HOME``, or the platform default."""
    named = os.environ.get("HIPPO_HOME")
    if named:
        return Path(named).expanduser()
    from platformdirs import user_data_path

    return user_data_path("hippo", appauthor=False)


def index_path() -> Path:
    """``$HIPPO_HOME/index.sqlite``."""
    return hippo_home() / "index.sqlite"
