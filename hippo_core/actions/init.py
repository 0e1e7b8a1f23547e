"""``hippo init``: the settings, the core pack (recorded in ``.hippo/packs.lock``), the notes
folder with its entry note, and the git ignore rules for local-only files.

Run again, it creates what is missing and changes nothing that exists. ``force`` overwrites
the core pack's files, and only those.
"""

from __future__ import annotations

import filecmp
import os
from dataclasses import dataclass
from pathlib import Path

from hippo_core.base.errors import HippoError
from hippo_core.files.atomic import atomic_write
from hippo_core.workspace.folder import Workspace, check_folder_name
from hippo_core.workspace.locate import HIPPO_DIR

GITIGNORE_HEADER = "# hippo: files that stay on this machine (written by `hippo init`)"

ENTRY_NOTE = """\
---
type: topic
status: current
---
# Home

This is the entry note: everything above the first second-level heading goes into the
context of every agent session, so keep it short and true.

Say what this project is, how the team works, and link the notes that matter most,
like [[Home]].

## Index

Notes that are useful but need not be in every session go below this heading.
"""


@dataclass(frozen=True)
class InitAction:
    """What ``hippo init`` did to one path: created, kept, overwrote or updated it."""

    verb: str
    path: str


def init_workspace(root: Path, *, force: bool = False) -> list[InitAction]:
    """Set up (or complete) the workspace at ``root``; returns what was done, path by path."""
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.schema import settings_template

    check_folder_name(os.fspath(root))
    actions: list[InitAction] = []
    hippo = root / HIPPO_DIR
    if hippo.exists() and not hippo.is_dir():
        raise HippoError(f"{hippo} exists and is not a folder; move it away and run again")
    settings = hippo / "settings.toml"
    chosen = None if settings.exists() else _relevance(root)
    actions.append(_create(root, settings, settings_template(chosen)))
    workspace = Workspace.open(root)
    plugins = load_plugins()
    packs = plugins.packs()
    if "core" not in packs:
        raise HippoError("no plugin registers the core pack; reinstall hippo")
    core = packs["core"]
    actions.extend(_install_pack(root, core.directory, workspace.packs_dir / "core", force))
    actions.extend(_lock_core(workspace, core.directory, force))
    actions.append(_create(root, workspace.entry_note_path, ENTRY_NOTE))
    actions.append(_ignore(root, (*workspace.local_only(), *plugins.local_paths(workspace))))
    return actions


def _relevance(root: Path) -> dict[str, tuple[str, list[str]]] | None:
    """The ``relevance`` a new settings file gets, with why: the setting that found most on
    the public retrieval sets, when it beats the specification's rule there and, if this
    folder's own sessions can say (``hippo eval context``), on them too. None: the rule."""
    from hippo_core.context.relevance import MIN_TASKS, PUBLIC_RECALL, SETTINGS

    rule = SETTINGS[0]
    best = max(PUBLIC_RECALL, key=PUBLIC_RECALL.__getitem__)
    if best == rule:
        return None
    own = _own_recall(root)
    if own is not None and own["tasks"] >= MIN_TASKS and own[best] <= own[rule]:
        return None
    others = ", ".join(f"{k} {v:.2f}" for k, v in PUBLIC_RECALL.items() if k != best)
    why = [
        f"hippo init set {best}: on the public retrieval sets replayed in date order it found",
        f"the most (recall@5 {PUBLIC_RECALL[best]:.2f}; {others}). Without this line the",
        f"specification's rule, {rule}, applies; `hippo eval context` compares them on your",
        "own sessions, and `hippo doctor` says when another would find clearly more.",
    ]
    return {"relevance": (best, why)}


def _own_recall(root: Path) -> dict[str, float] | None:
    """recall@5 of each setting on the sessions the index holds of ``root`` (with its number
    of tasks), as ``hippo eval context`` measures it; None with no index to ask."""
    from hippo_core.dream.measure import measure_context
    from hippo_core.files.home import index_path
    from hippo_core.index.derived import write_derived
    from hippo_core.settings.values import LoadedSettings, Settings

    index = index_path()
    if not index.exists():
        return None
    workspace = Workspace(root, LoadedSettings(Settings()))
    try:
        write_derived(index, workspace)  # the records an ingest here would have written
        found = measure_context(workspace, baseline=False)
    except (HippoError, OSError):
        return None
    figures = {
        name.removeprefix("relevance = "): rates["recall_at_5"] or 0.0
        for name, rates in found["rankings"].items()
    }
    return {**figures, "tasks": found["tasks"]}


def _create(root: Path, path: Path, text: str) -> InitAction:
    shown = path.relative_to(root).as_posix()
    if path.exists():
        return InitAction("kept", shown)
    atomic_write(path, text)
    return InitAction("created", shown)


def _install_pack(root: Path, source: Path, target: Path, force: bool) -> list[InitAction]:
    actions = []
    for file in sorted(
        p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ):
        dest = target / file.relative_to(source)
        shown = dest.relative_to(root).as_posix()
        if not dest.exists():
            atomic_write(dest, file.read_bytes())
            actions.append(InitAction("created", shown))
        elif force and not filecmp.cmp(file, dest, shallow=False):
            atomic_write(dest, file.read_bytes())
            actions.append(InitAction("overwrote", shown))
        else:
            actions.append(InitAction("kept", shown))
    return actions


def _lock_core(workspace: Workspace, source: Path, force: bool) -> list[InitAction]:
    """Record the core pack in ``.hippo/packs.lock`` with the digests of hippo's files, so
    that ``hippo pack list`` can tell the team's edits from what hippo installed."""
    from hippo_core.packs.lock import Locked, file_digests, lock_path, read_lock, update_lock
    from hippo_core.packs.manifest import read_manifest
    from hippo_core.version import __version__

    shown = workspace.relative(lock_path(workspace))
    locked = read_lock(workspace).get("core")
    if locked is not None and not force:
        return [InitAction("kept", shown)]
    existed = lock_path(workspace).exists()
    manifest = read_manifest(source)
    entry = Locked(
        name="core",
        version=manifest.version if manifest else __version__,
        origin="builtin",
        source=f"hippo-memory {__version__}",
        files=file_digests(source),
    )
    if entry == locked:
        return [InitAction("kept", shown)]
    update_lock(workspace, entry)
    return [InitAction("updated" if existed else "created", shown)]


def _ignore(root: Path, local_only: tuple[str, ...]) -> InitAction:
    path = root / ".gitignore"
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in existing.splitlines()}
    missing = [f"/{rule}" for rule in local_only if f"/{rule}" not in present]
    if not missing:
        return InitAction("kept", ".gitignore")
    lines = missing if GITIGNORE_HEADER in present else [GITIGNORE_HEADER, *missing]
    prefix = existing if not existing or existing.endswith("\n") else existing + "\n"
    atomic_write(path, prefix + "\n".join(lines) + "\n")
    return InitAction("updated" if existing else "created", ".gitignore")
