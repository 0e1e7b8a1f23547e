"""A workspace: the folder holding ``.hippo/``, its settings and the paths hippo uses."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from hippo_core.errors import HippoError
from hippo_core.locate import HIPPO_DIR
from hippo_core.locate import find_root as _find_root
from hippo_core.settings_file import SETTINGS_FILE, load_settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.notes.index import NotesIndex
    from hippo_core.notes.store import NoteSet
    from hippo_core.settings import LoadedSettings, Settings


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
    found = _find_root(os.fspath(start))
    return None if found is None else Path(found)


class Workspace:
    """One workspace. Paths are absolute; ``settings`` are validated."""

    def __init__(self, root: Path, loaded: LoadedSettings) -> None:
        self.root = root
        self.loaded = loaded

    def __repr__(self) -> str:
        return f"Workspace(root={self.root!r})"

    @classmethod
    def open(cls, root: Path) -> Workspace:
        """Open the workspace at ``root``, reading and validating its settings."""
        hippo = root / HIPPO_DIR
        loaded = load_settings(
            hippo / SETTINGS_FILE,
            shown_as=f"{HIPPO_DIR}/{SETTINGS_FILE}",
            cache_path=hippo / "cache" / "settings.json",
        )
        return cls(root=root, loaded=loaded)

    @classmethod
    def find(cls, start: Path | None = None) -> Workspace:
        """Open the workspace at or above ``start`` (default: the current directory)."""
        start = Path.cwd() if start is None else start
        root = find_root(start)
        if root is None:
            raise HippoError(
                f"no hippo workspace at {start} or above (no {HIPPO_DIR}/ folder); "
                "run `hippo init` in the folder that should hold one"
            )
        return cls.open(root)

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

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

    def relative(self, path: Path) -> str:
        """``path`` as shown to a person: relative to the workspace when inside it."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return os.fspath(path)

    @cached_property
    def notes_index(self) -> NotesIndex:
        """The notes index (``.hippo/cache/notes.sqlite``), refreshed once per workspace
        object: what changed since the last call is read again, nothing else."""
        from hippo_core.notes.index import open_index

        return open_index(self.notes_dir, self.cache_dir / "notes.sqlite")

    @cached_property
    def notes(self) -> NoteSet:
        """Every note below ``notes_dir``, from the notes index."""
        from hippo_core.notes.store import NoteSet

        return NoteSet(self.notes_dir, self.notes_index.notes())
