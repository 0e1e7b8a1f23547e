"""The commands an agent waits for, read before typer is imported.

``hippo hook EVENT [--tool NAME]``, ``hippo context [--task TEXT] [--session ID] [--budget
N]`` and ``hippo ingest [--full] [--json]`` run on every session, every prompt, or after
every session; importing typer and click alone would cost them more than starting the
interpreter. This reader takes exactly the options the typer commands declare (a test keeps
the two in step) and runs the same functions. Anything it does not read with certainty
(``--help``, an unknown or repeated-looking option, a value that could be an option, a
number that is not plain digits) is left to the full command line, which gives the usual
help and usage errors.
"""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hippo_core.workspace.folder import Workspace

#: For each command: its options, each taking a value (``str``, ``int``) or a flag (``bool``).
OPTIONS: dict[str, dict[str, type]] = {
    "context": {"--task": str, "--session": str, "--budget": int},
    "hook": {"--tool": str},
    "ingest": {"--full": bool, "--json": bool},
}
HOOK_EVENTS = ("session-start", "prompt", "session-end", "compact")


def run(args: list[str]) -> int | None:
    """Run ``hippo ARGS`` if it is a call this reader takes; its exit code, else None."""
    if not args or args[0] not in OPTIONS:
        return None
    name, rest = args[0], args[1:]
    event = None
    if name == "hook":
        if not rest or rest[0] not in HOOK_EVENTS:
            return None
        event, rest = rest[0], rest[1:]
    values = read_options(rest, OPTIONS[name])
    if values is None:
        return None
    return _COMMANDS[name](values, event)


def read_options(args: list[str], options: dict[str, type]) -> dict[str, object] | None:
    """The options in ``args`` by name (``--task`` as ``task``), or None when unsure."""
    values: dict[str, object] = {}
    at = 0
    while at < len(args):
        word = args[at]
        name, equals, inline = word.partition("=")
        kind = options.get(name)
        if kind is None:
            return None
        key = name[2:].replace("-", "_")
        if kind is bool:
            if equals:
                return None
            values[key] = True
            at += 1
            continue
        if equals:
            value = inline
        elif at + 1 < len(args) and not args[at + 1].startswith("-"):
            value = args[at + 1]
            at += 1
        else:
            return None
        if kind is int:
            if not value.isascii() or not value.isdigit():
                return None
            values[key] = int(value)
        else:
            values[key] = value
        at += 1
    return values


def context(task: str | None, session: str | None, budget: int | None) -> int:
    """Print the block on stdout and what was left out on stderr; the exit code."""
    from hippo_core.context.budget import check_budget
    from hippo_core.context.build import build_context
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import LOOKS, Workspace

    if budget is not None:
        check_budget(budget)
    workspace = Workspace.find()
    workspace.looks = LOOKS
    for line in workspace.loaded.warnings:
        sys.stderr.write(f"warning: {line}\n")
    plugins = load_plugins(hot=True)
    block = build_context(workspace, task=task, session=session, budget=budget, plugins=plugins)
    for omission in block.omitted:
        sys.stderr.write(f"{omission.render()}\n")
    sys.stdout.write(block.text)
    sys.stdout.flush()
    return 0


def hook(event: str, tool: str) -> int:
    """Read the hook's JSON on stdin and run ``event``; always 0, so the agent goes on."""
    from hippo_core.actions.hook import log_problem, run_hook

    try:
        stdin = sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        log_problem(event, f"stdin cannot be read ({exc})")
        return 0
    run_hook(event, tool, stdin, sys.stdout)
    return 0


class _Bar:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, files: int, total: int) -> None:
        self.files, self.total, self.done, self.count, self.drawn = files, max(total, 1), 0, 0, 0.0

    def advance(self, read: int) -> None:
        self.done += read
        self.count += 1
        now = time.monotonic()
        if now - self.drawn >= 0.1 or self.count == self.files:
            self.drawn = now
            share = min(self.done / self.total, 1.0)
            bar = "#" * int(share * 30)
            sys.stderr.write(f"\ringest [{bar:<30}] {share:4.0%} {self.count}/{self.files} files")
            sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r" + " " * 70 + "\r")
        sys.stderr.flush()


def ingest(full: bool, as_json: bool) -> int:
    """Ingest, print the summary (or JSON), write the derived records; the exit code."""
    from pathlib import Path

    from hippo_core.index.ingest import ingest as run_ingest
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import Workspace, find_root

    load_plugins(hot=True)  # the sources, read as an agent's hooks read plugins

    def say(line: str) -> None:
        sys.stderr.write(f"{line}\n")

    from hippo_core.files.home import user_path

    root = find_root(Path.cwd())
    workspace = Workspace.open(root) if root is not None else None
    for line in workspace.loaded.warnings if workspace else ():
        say(f"warning: {line}")
    extra = (
        {
            tool: tuple(str(workspace.root / user_path(folder)) for folder in folders)
            for tool, folders in workspace.settings.transcript_dirs.items()
        }
        if workspace
        else {}
    )
    bars: list[_Bar] = []

    def progress(files: int, total: int) -> Callable[[int], None]:
        bars.append(_Bar(files, total))
        return bars[0].advance

    show_bar = not as_json and sys.stderr.isatty()
    try:
        summary = run_ingest(
            full=full, extra_dirs=extra, say=say, progress=progress if show_bar else None
        )
    finally:
        for bar in bars:
            bar.close()
    records = _write_derived(workspace) if workspace else 0
    team = _push(workspace, say) if workspace else None
    if as_json:
        import json

        shown = {**summary.as_dict(), "records": records}
        if team is not None:
            shown["team"] = team
        sys.stdout.write(json.dumps(shown, indent=2) + "\n")
        return 0
    for problem in summary.problems:
        say(f"warning: {problem}")
    line = summary.line()
    if workspace is not None:
        line += f"; {records} session record{'' if records == 1 else 's'} written"
    sys.stdout.write(f"{line}\n")
    if team and "line" in team:
        sys.stdout.write(f"{team['line']}\n")
    return 0


def _push(workspace: Workspace, say: Callable[[str], None]) -> dict[str, object] | None:
    """Push to the team index when the workspace has one; what happened, for the output.
    A server that is away is a warning: the local index has it all, the next ingest
    catches up."""
    import os

    if not (workspace.settings.index_url or os.environ.get("HIPPO_INDEX_URL")):
        return None
    from hippo_core.base.errors import HippoError
    from hippo_core.index import team
    from hippo_core.index.team_history import pull

    try:
        url = team.configured_url(workspace)
        pushed = team.push(workspace, url)
    except HippoError as exc:
        say(f"warning: {exc}")
        return {"error": str(exc)}
    done: dict[str, object] = dict(pushed.__dict__)
    try:
        done["history"] = pull(workspace, url)  # the others' sessions, for relevance = history
    except HippoError as exc:
        say(f"warning: {exc}")
        done["history_error"] = str(exc)
    said = pushed.line(url) if pushed.anything else ""
    return {**done, "line": said} if said else done


def _write_derived(workspace: Workspace) -> int:
    from hippo_core.files.home import index_path
    from hippo_core.index.derived import write_derived

    return write_derived(index_path(), workspace)


def _context(values: dict[str, object], event: str | None) -> int:
    return context(values.get("task"), values.get("session"), values.get("budget"))  # type: ignore[arg-type]


def _hook(values: dict[str, object], event: str | None) -> int:
    assert event is not None
    return hook(event, str(values.get("tool", "claude-code")))


def _ingest(values: dict[str, object], event: str | None) -> int:
    return ingest(bool(values.get("full")), bool(values.get("json")))


_COMMANDS: dict[str, Callable[[dict[str, object], str | None], int]] = {
    "context": _context,
    "hook": _hook,
    "ingest": _ingest,
}
