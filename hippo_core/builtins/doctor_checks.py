"""The built-in checks of ``hippo doctor``.

Settings, the entry and required notes, the linter, the context budget of each sample task,
plugins that failed to load, and local-only files that git tracks (git is only read).
"""

from __future__ import annotations

import os

from hippo_core.base.errors import HippoError
from hippo_core.plugins.manager import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.base.findings import Finding
    from hippo_core.plugins.manager import CommandEntry, Plugins
    from hippo_core.workspace.folder import Workspace


@hookimpl
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.notes.lint import lint_notes
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.settings.tables import placed, unknown_tables

    settings = workspace.relative(workspace.settings_path)
    plugins = load_plugins()
    warned = placed(workspace.loaded.warnings, plugins)
    findings = [Finding("warning", "settings", line) for line in warned]
    findings.extend(
        Finding("warning", "plugin", f"{p.name} from {p.distribution} was skipped: {p.error}")
        for p in plugins.broken
    )
    clashes = plugins.clashes() + _command_clashes(plugins)  # asks every registering hook
    plugins.all_packs()
    findings.extend(
        Finding("warning", "plugin", f"{said}; what it registers there is left out")
        for said in plugins.failed.values()
    )
    findings.extend(Finding("warning", "plugin", line) for line in clashes)
    findings.extend(
        Finding("warning", "settings", line) for line in unknown_tables(workspace, plugins)
    )
    findings.extend(_notes_exist(workspace, settings))
    findings.extend(lint_notes(workspace))
    findings.extend(_budgets(workspace))
    findings.extend(_git_tracked(workspace, plugins.local_paths(workspace)))
    return findings


def _command_clashes(plugins: Plugins) -> list[str]:
    """A command a plugin registers under a name another plugin registered first."""
    entries = plugins.all_commands()
    kept: dict[str, CommandEntry] = {}
    for entry in entries:
        kept.setdefault(entry.name, entry)
    return [
        f"plugin {entry.plugin.origin} registers the command '{entry.name}', which "
        f"{kept[entry.name].plugin.origin} registered first; `hippo {entry.name}` runs "
        "that one"
        for entry in entries
        if kept[entry.name] is not entry
    ]


def _notes_exist(workspace: Workspace, settings: str) -> list[Finding]:
    from hippo_core.base.findings import Finding

    findings = []
    if not workspace.notes_dir.is_dir():
        shown = workspace.relative(workspace.notes_dir)
        return [Finding("error", "notes_dir", f"{shown} is not a folder", settings)]
    entry = workspace.entry_note_path
    if not entry.is_file():
        detail = f"{workspace.relative(entry)} does not exist (entry_note)"
        findings.append(Finding("error", "entry note", detail, settings))
    for path in workspace.settings.required_notes:
        if path not in workspace.notes:
            detail = f"{workspace.settings.notes_dir}/{path} does not exist (required_notes)"
            findings.append(Finding("error", "required note", detail, settings))
    return findings + _unreadable_names(workspace)


def _unreadable_names(workspace: Workspace) -> list[Finding]:
    """Notes and folders below ``notes_dir`` whose names are not UTF-8: left out of
    everything, so named here."""
    from hippo_core.base.findings import Finding
    from hippo_core.files.names import shown_name, utf8_name

    found = []
    for folder, dirs, files in os.walk(workspace.notes_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in [*dirs, *files]:
            if not utf8_name(name):
                where = os.path.join(workspace.relative(folder), name)
                detail = "the name is not UTF-8; hippo leaves it out: rename it"
                found.append(Finding("warning", "notes", f"{shown_name(where)}: {detail}"))
        dirs[:] = [d for d in dirs if utf8_name(d)]
    return found


def _budgets(workspace: Workspace) -> list[Finding]:
    from hippo_core.base.findings import Finding
    from hippo_core.context.build import build_context

    findings = []
    budget = workspace.settings.budget_bytes
    for task in workspace.settings.sample_tasks:
        try:
            block = build_context(workspace, task=task)
        except HippoError as exc:
            findings.append(Finding("error", "budget", f"task {task!r}: {exc}"))
            continue
        findings.append(
            Finding("info", "budget", f"task {task!r} uses {block.size} of {budget} bytes")
        )
        findings.extend(
            Finding("warning", "budget", f"task {task!r}: {omission.render()}")
            for omission in block.omitted
        )
    return findings


def _git_tracked(workspace: Workspace, more: list[str]) -> list[Finding]:
    import shutil
    import subprocess

    from hippo_core.base.findings import Finding

    git = shutil.which("git")
    if git is None:
        return [
            Finding("info", "git", "git is not installed; tracked local-only files not checked")
        ]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # a read must not take git's index lock
    result = subprocess.run(
        [git, "ls-files", "-z", "--", *workspace.local_only(), *more],
        cwd=workspace.root,
        capture_output=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        return [
            Finding("info", "git", "not a git repository; tracked local-only files not checked")
        ]
    tracked = [p for p in result.stdout.decode("utf-8", "replace").split("\0") if p]
    return [
        Finding(
            "warning",
            "git",
            f"git tracks {path}, which should stay on this machine; "
            f"untrack it with `git rm --cached -- '{path}'`",
        )
        for path in tracked
    ]
