"""``$HIPPO_HOME``: this machine's hippo folder, holding the transcript index.

It defaults to the platform's user data folder for ``hippo`` (``~/.local/share/hippo`` on
Linux, ``~/Library/Application Support/hippo`` on macOS).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def hippo_home() -> Path:
    """The folder named by ``HIPPO_HOME``, or the platform default."""
    from pathlib import Path

    return Path(home_folder())


def home_folder() -> str:
    """:func:`hippo_home` as a string, for the agents' hooks (no :mod:`pathlib`)."""
    named = os.environ.get("HIPPO_HOME")
    if named:
        return expand_user(named)
    if sys.platform == "linux" and "ANDROID_ROOT" not in os.environ:
        # What platformdirs answers on Linux, without the milliseconds its import costs
        # every hook: the XDG data folder when that is an absolute path.
        data = os.environ.get("XDG_DATA_HOME", "")
        if not os.path.isabs(data):
            data = os.path.expanduser("~/.local/share")
        return os.path.join(data, "hippo")
    from platformdirs import user_data_dir

    return user_data_dir("hippo", appauthor=False)


def expand_user(text: str) -> str:
    """``text`` with a leading ``~`` or ``~user`` made the home folder, as a shell would; as
    it is when no such user exists or the text cannot be a path (a NUL byte). Never raises,
    where :meth:`pathlib.Path.expanduser` raises :class:`RuntimeError` for ``~0``."""
    try:
        return os.path.expanduser(text)
    except ValueError:
        return text


def user_path(text: str) -> Path:
    """:func:`expand_user` as a :class:`~pathlib.Path`: how a path a person typed is read."""
    from pathlib import Path

    return Path(expand_user(text))


def index_path() -> Path:
    """``$HIPPO_HOME/index.sqlite``."""
    return hippo_home() / "index.sqlite"
