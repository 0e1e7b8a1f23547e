"""Which files belong to the project a turn ran in, so a read elsewhere can be told apart.

The project is the git work tree that holds the turn's folder and every other work tree of
its repository (``git worktree``): an agent in ``~/src/shop`` that reads
``~/src/shop-hotfix/README.md`` stays inside. Outside git, or when the folder is gone and
nothing above it is a work tree, the project is the folder itself. git's own files are read
(``.git``, its ``commondir`` and ``worktrees/*/gitdir``), never git itself: a few ``stat``
calls per folder, and nothing fails when a folder no longer exists.
"""

from __future__ import annotations

import os


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute and normalised)."""
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


def project_roots(cwd: str) -> tuple[str, ...]:
    """The work trees of the repository that holds ``cwd``; ``(cwd,)`` outside git.

    A repository whose work tree is the home folder (a dotfiles repository) or ``/`` is
    not taken as the project: it would hold every file of the user.
    """
    cwd = os.path.normpath(cwd)
    home = os.path.expanduser("~").rstrip("/")
    folder = cwd
    while True:
        entry = os.path.join(folder, ".git")
        common = _git_dir(entry)
        if common is not None:
            if folder in (home, "/"):
                return (cwd,)
            roots = [folder]
            if os.path.basename(common) == ".git":  # not a bare repository's
                roots.append(os.path.dirname(common))
            roots.extend(_worktrees(common))
            return tuple(dict.fromkeys(roots))
        parent = os.path.dirname(folder)
        if parent == folder:
            return (cwd,)
        folder = parent


def _git_dir(entry: str) -> str | None:
    """The repository's own git folder (its common dir) for a ``.git`` entry, or None when
    there is no such entry."""
    if os.path.isdir(entry):
        return entry
    try:
        with open(entry, encoding="utf-8") as handle:
            line = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    gitdir = line.removeprefix("gitdir:").strip()
    if not line.startswith("gitdir:") or not gitdir:
        return None
    gitdir = os.path.normpath(os.path.join(os.path.dirname(entry), gitdir))
    return common_dir(gitdir) or gitdir


def common_dir(gitdir: str) -> str | None:
    """The common dir a linked work tree's git folder names in ``commondir``, or None."""
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(gitdir, handle.read().strip()))
    except (OSError, UnicodeDecodeError):
        return None


def _worktrees(common: str) -> list[str]:
    """The linked work trees git knows of: each ``worktrees/<name>/gitdir`` names the
    ``.git`` file of one."""
    found = []
    try:
        with os.scandir(os.path.join(common, "worktrees")) as entries:
            names = [entry.path for entry in entries if entry.is_dir()]
    except OSError:
        return []
    for folder in sorted(names):
        try:
            with open(os.path.join(folder, "gitdir"), encoding="utf-8") as handle:
                dot_git = handle.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if dot_git:
            found.append(os.path.dirname(os.path.normpath(os.path.join(folder, dot_git))))
    return found


class Scope:
    """Tells, for the turns of one transcript, whether a file read is outside the project.

    ``own`` are the agent's own folders (where it keeps its transcripts, settings and large
    tool outputs): what it reads there it wrote itself. Each folder's project is found once.
    """

    __slots__ = ("own", "roots")

    def __init__(self, own: tuple[str, ...] = ()) -> None:
        self.own = own  # absolute and normalised, as agent_folder gives them
        self.roots: dict[str, tuple[str, ...]] = {}

    def outside(self, path: str, cwd: str | None) -> bool:
        """Whether ``path`` (absolute, normalised) is outside the project of a turn in
        ``cwd``; never, when the turn's folder is unknown."""
        if not cwd or not os.path.isabs(path):
            return False
        if path.startswith(cwd) and path[len(cwd) : len(cwd) + 1] in ("/", ""):
            return False  # the turn's own folder: the most common read by far
        if any(under(path, folder) for folder in self.own):
            return False
        roots = self.roots.get(cwd)
        if roots is None:
            roots = self.roots[cwd] = project_roots(cwd)
        return not any(under(path, root) for root in roots)


def agent_folder(transcript: str, marker: str) -> str | None:
    """The agent's own folder above a transcript: the parent of the nearest folder named
    ``marker`` (``~/.claude`` above ``projects/``), or None (never ``/`` or the home
    folder, which would hold every file)."""
    key = (os.path.dirname(transcript), marker)
    found = _AGENT_FOLDERS.get(key, "")
    if found == "":  # an ingest asks once per file, of a few folders
        found = _AGENT_FOLDERS[key] = _agent_folder(os.path.abspath(key[0]), marker)
    return found


_AGENT_FOLDERS: dict[tuple[str, str], str | None] = {}


def _agent_folder(folder: str, marker: str) -> str | None:
    while True:
        if os.path.basename(folder) == marker:
            found = os.path.dirname(folder)
            return None if found in ("/", os.path.expanduser("~").rstrip("/")) else found
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
