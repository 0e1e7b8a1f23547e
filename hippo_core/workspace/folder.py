"""A workspace: the folder holding ``.hippo/``, its settings and the paths hippo uses."""

from __future__ import annotations

import os
from functools import cached_property

from hippo_core.base.errors import HippoError
from hippo_core.files.names import shown_name, utf8_name
from hippo_core.settings.file import SETTINGS_FILE, load_settings
from hippo_core.workspace.locate import HIPPO_DIR
from hippo_core.workspace.locate import find_root as _find_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from hippo_core.notes.index import NotesIndex
    from hippo_core.notes.store import NoteSet
    from hippo_core.settings.values import LoadedSettings, Settings


#: How many notes a call an agent waits for (its hooks, ``hippo context``) stats to keep
#: the notes index fresh when no watcher does, or a tenth of them when that is more:
#: stat-ing all of 20,000 notes costs such a call more than everything else it does. Each
#: such call looks at the next ones, so a run of ten calls looks at them all; every folder
#: is stat-ed each time (a note added, removed or renamed is seen at once), and a note the
#: block names is looked at before it is shown
#: (:meth:`~hippo_core.notes.index.NotesIndex.fresh`).
LOOKS = 200
#: Paths below the workspace that stay on one machine: ``hippo init`` git-ignores them and
#: ``hippo doctor`` warns when git tracks one. The session log is added from the settings.
LOCAL_ONLY = (
    ".hippo/snapshots/",
    ".hippo/reports/",
    ".hippo/sessions/",
    ".hippo/dream-state.json",
    ".hippo/cache/",
    ".hippo/.pack-*/",  # a pack command's staging folder, left only by a crash
)


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds a ``.hippo/`` folder."""
    from pathlib import Path

    found = _find_root(os.fspath(start))
    return None if found is None else Path(found)


def check_folder_name(folder: str) -> None:
    """Refuse a workspace whose folder's path is not UTF-8: every receipt, record and index
    keeps paths as UTF-8 text."""
    if not utf8_name(folder):
        raise HippoError(
            f"the workspace folder {shown_name(folder)} is not a UTF-8 path, which hippo"
            " needs to record it; rename it or move the workspace"
        )


class Workspace:
    """One workspace, found with ``Workspace.find()`` or opened with ``Workspace.open(root)``:
    ``root``, ``settings`` (validated), ``notes_dir``, ``hippo_dir``, ``packs_dir``,
    ``sessions_dir``, ``settings_path``, ``inside(*parts)`` and ``relative(path)``; every path
    absolute.

    The folders are :class:`~pathlib.Path` objects, made when first asked for; the agents'
    hooks, which must not pay for importing :mod:`pathlib`, use :attr:`folder` and
    :meth:`inside`, the same paths as strings.
    """

    #: How many notes opening the notes index stats at most, when no watcher keeps it
    #: fresh (None: every one); the calls an agent waits for set :data:`LOOKS`.
    looks: int | None = None

    def __init__(self, root: str | os.PathLike[str], loaded: LoadedSettings) -> None:
        #: The workspace's folder, as a string.
        self.folder = os.fspath(root)
        self.loaded = loaded

    def __repr__(self) -> str:
        return f"Workspace({self.folder!r})"

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Workspace:
        """Open the workspace at ``root``, reading and validating its settings."""
        check_folder_name(os.fspath(root))
        hippo = os.path.join(root, HIPPO_DIR)
        loaded = load_settings(
            os.path.join(hippo, SETTINGS_FILE),
            shown_as=f"{HIPPO_DIR}/{SETTINGS_FILE}",
            cache_path=os.path.join(hippo, "cache", "settings.json"),
        )
        return cls(root, loaded)

    @classmethod
    def find(cls, start: str | os.PathLike[str] | None = None) -> Workspace:
        """Open the workspace at or above ``start`` (default: the current directory)."""
        start = os.getcwd() if start is None else os.fspath(start)
        root = _find_root(start)
        if root is None:
            raise HippoError(
                f"no hippo workspace at {start} or above (no {HIPPO_DIR}/ folder); "
                "run `hippo init` in the folder that should hold one"
            )
        return cls.open(root)

    def inside(self, *parts: str) -> str:
        """A path below the workspace's folder, as a string (``/`` in parts is fine)."""
        return os.path.join(self.folder, *parts)

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    @cached_property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.folder)

    @property
    def hippo_dir(self) -> Path:
        return self.root / HIPPO_DIR

    @property
    def settings_path(self) -> Path:
        return self.hippo_dir / SETTINGS_FILE

    @property
    def cache_dir(self) -> Path:
        return self.hippo_dir / "cache"

    @property
    def packs_dir(self) -> Path:
        return self.hippo_dir / "packs"

    @property
    def sessions_dir(self) -> Path:
        return self.hippo_dir / "sessions"

    @property
    def notes_dir(self) -> Path:
        return self.root / self.settings.notes_dir

    @property
    def entry_note_path(self) -> Path:
        return self.notes_dir / self.settings.entry_note

    @property
    def log_path(self) -> Path:
        return self.root / self.settings.effective_log_path

    @property
    def log_note(self) -> str | None:
        """The session log as a note path (relative to ``notes_dir``), when it is one.

        Dreaming leaves it alone: ``hippo log`` writes it again from the records.
        """
        try:
            return self.log_path.relative_to(self.notes_dir).as_posix()
        except ValueError:
            return None

    def local_only(self) -> tuple[str, ...]:
        """Workspace-relative paths that must not be committed (folders end with ``/``)."""
        return (*LOCAL_ONLY, self.settings.effective_log_path)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` as shown to a person: relative to the workspace when inside it."""
        path = os.fspath(path)
        head = os.path.join(self.folder, "")
        if path.startswith(head):
            return path[len(head) :].replace(os.sep, "/")
        return "." if path == self.folder else path

    @cached_property
    def notes_index(self) -> NotesIndex:
        """The notes index (``.hippo/cache/notes.sqlite``), refreshed once per workspace
        object: what changed since the last call is read again, nothing else."""
        from hippo_core.notes.index import open_index

        notes = self.inside(self.settings.notes_dir)
        kept = self.settings.relevance in ("bm25", "history")
        path = self.inside(HIPPO_DIR, "cache", "notes.sqlite")
        return open_index(notes, path, with_terms=kept, looks=self.looks)

    @cached_property
    def terms_index(self) -> NotesIndex:
        """A notes index that keeps every note's terms, for what ranks by them (verify's
        turn search, ``hippo eval context``): the notes index itself under ``relevance =
        "bm25"``, else one of its own (``.hippo/cache/notes-terms.sqlite``)."""
        from hippo_core.notes.index import open_index

        if self.settings.relevance in ("bm25", "history"):
            return self.notes_index
        notes = self.inside(self.settings.notes_dir)
        path = self.inside(HIPPO_DIR, "cache", "notes-terms.sqlite")
        return open_index(notes, path, with_terms=True)

    @cached_property
    def notes(self) -> NoteSet:
        """Every note below ``notes_dir``, from the notes index."""
        from hippo_core.notes.store import NoteSet

        return NoteSet(self.notes_dir, self.notes_index.notes())
