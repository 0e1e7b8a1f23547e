"""hippo's model folders: where a dream's ``model_command`` runs, and what is never a workspace.

The command backend runs the model program in a fresh folder of the temporary folder,
``hippo-model-`` and eight letters, digits or ``_`` (``tempfile.TemporaryDirectory``), with
an owner file naming the hippo process (:data:`OWNER`); the folder goes when the call
returns. An agent run as the model (``claude -p``, its sub-agents) writes transcripts whose
``cwd`` is that folder, and may read the workspace's notes: such a session is hippo talking
to itself, never a session of a workspace, never evidence, never counted by a trigger.

A folder is hippo's when its name has that shape, it sits in a temporary folder, and, while
it still exists, it holds the owner file (one that is gone is known by its name alone). A
project whose path merely has the words in it (``~/src/my-hippo-model-tests``) is not one.

Plain ``os`` calls only: the agents' hooks ask on every call.
"""

from __future__ import annotations

import os

PREFIX = "hippo-model-"
#: The file in a model folder that names the process using it.
OWNER = ".hippo-owner"
#: The characters ``tempfile`` makes the rest of a folder's name of, and how many.
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_NAME_LENGTH = 8
#: Where ``tempfile.gettempdir()`` looks when no variable names the temporary folder.
_TEMP_FALLBACKS = ("/tmp", "/var/tmp", "/usr/tmp")


def _temporary_folders() -> list[str]:
    """The folders ``tempfile`` may make a model folder in (as named, and as resolved)."""
    found = [os.environ.get(name, "") for name in ("TMPDIR", "TEMP", "TMP")]
    found += _TEMP_FALLBACKS
    folders: list[str] = []
    for folder in found:
        if folder:
            for form in (os.path.normpath(folder), os.path.realpath(folder)):
                if form not in folders:
                    folders.append(form)
    return folders


def _named_like_one(name: str) -> bool:
    rest = name[len(PREFIX) :]
    return (
        name.startswith(PREFIX)
        and len(rest) == _NAME_LENGTH
        and all(char in _NAME_CHARS for char in rest)
    )


def model_folder_of(path: object) -> str | None:
    """The hippo model folder ``path`` is in (or is), or None (for anything but an
    absolute path too: a record's ``cwd`` may be missing or of the wrong type)."""
    if not isinstance(path, str) or PREFIX not in path or not os.path.isabs(path):
        return None
    path = os.path.normpath(path)
    for temporary in _temporary_folders():
        head = temporary.rstrip(os.sep) + os.sep
        if not path.startswith(head):
            continue
        name = path[len(head) :].split(os.sep, 1)[0]
        if not _named_like_one(name):
            continue
        folder = head + name
        try:
            os.lstat(folder)
        except FileNotFoundError:
            return folder  # gone, as every model folder is once its call returned
        except OSError:
            return None
        return folder if os.path.isfile(os.path.join(folder, OWNER)) else None
    return None


def in_model_folder(path: object) -> bool:
    """True when ``path`` is in one of hippo's model folders (see the module's text)."""
    return model_folder_of(path) is not None
