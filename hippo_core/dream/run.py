"""``hippo dream``: one run over the window, chunk by chunk, pass by pass, unit by unit.

ingest new transcripts; take the workspace's dream lock
for each chunk of the window (24 hours at most, from last_success):
  for each pass (sorted <pack>/<name>) that no plugin gates off:
    for each unit (a note when per_note, else the chunk):
      inputs = the readers, fitted to the input budget (omissions recorded)
      prompt = the pass's prompt rendered with them
      reply  = the model's answer                 (a dry run stops before this)
      each proposal: checked -> written once -> reviewed -> receipt (and applied)
  last_success = the chunk's end
write the report
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.dream import state as dream_state
from hippo_core.dream.model import Chunk, ModelBackend, Pass, SessionView
from hippo_core.dream.packs import PackError
from hippo_core.dream.report import Report
from hippo_core.dream.unit import UnitRunner
from hippo_core.errors import HippoError, UsageError
from hippo_core.events import Event

if TYPE_CHECKING:
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.notes.note import Note
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace


@dataclass(frozen=True)
class Options:
    only: str | None = None
    dry_run: bool = False
    since: datetime | timedelta | None = None
    """Where the window starts: a time, or a span back from the window's end."""
    # What ``hippo eval`` sets to run one case exactly; ``hippo dream`` leaves them None.
    until: datetime | None = None
    """The window's end instead of now."""
    backend: ModelBackend | None = None
    """The backend to use instead of the one the settings name."""
    transcripts: dict[str, tuple[str, ...]] | None = None
    """The only transcript folders to ingest, by tool: no default folders, no
    ``transcript_dirs``."""
    passes: frozenset[str] | None = None
    """The keys (``<pack>/<name>``) of the passes to run; None runs them all."""
    show_prompts: bool = False
    """A dry run keeps each prompt it built (``Outcome.prompts``) to show it."""


@dataclass(frozen=True)
class Outcome:
    report: Path
    status: str
    error: str
    prompts: tuple[tuple[str, str], ...] = ()
    """A dry run's prompts with ``--show-prompts``: where each would go, and its text."""
    warnings: tuple[str, ...] = ()
    """The report's warning lines: packs that did not run, or not as the lock says."""


@contextmanager
def dream_lock(workspace: Workspace) -> Iterator[None]:
    """Hold this workspace's dream lock; a second dream in the same workspace is refused.

    The lock file lives in ``$HIPPO_HOME/locks/``, named for the workspace's folder, so a
    dream (a dry run too) writes nothing in the workspace but what it reports.
    """
    from hippo_core.home import hippo_home
    from hippo_core.locks import file_lock

    path = dream_lock_path(workspace)
    with file_lock(path, wait=0, owner_only=hippo_home()) as handle:
        if handle is None:
            raise HippoError(
                f"another hippo dream is running in this workspace ({path} is held); "
                "try again when it has finished"
            )
        yield


def dream_lock_path(workspace: Workspace) -> Path:
    import hashlib

    from hippo_core.home import hippo_home

    digest = hashlib.sha256(str(workspace.root.resolve()).encode("utf-8")).hexdigest()
    return hippo_home() / "locks" / f"dream-{digest[:16]}.lock"


def dream(workspace: Workspace, options: Options, say: Callable[[str], None]) -> Outcome:
    """Run the dream; the report is written whatever happens, and its path returned."""
    from hippo_core.plugins import load_plugins

    with dream_lock(workspace):
        plugins = load_plugins()
        report = Report(datetime.now(UTC), options.dry_run)
        report.keep_prompts = options.dry_run and options.show_prompts
        try:
            _run(workspace, plugins, options, report, say)
        except UsageError:
            raise
        except HippoError as exc:
            shown = exc.shown_in(workspace) if isinstance(exc, PackError) else exc
            report.fail(str(shown))
        except BaseException as exc:
            report.fail(f"{type(exc).__name__}: {exc}")
            _finish(workspace, plugins, options, report)
            raise
        path = _finish(workspace, plugins, options, report)
    return Outcome(path, report.status, report.error, tuple(report.prompts), tuple(report.warnings))


def _finish(workspace: Workspace, plugins: Plugins, options: Options, report: Report) -> Path:
    path = report.write(workspace)
    if not options.dry_run:
        state = dream_state.read_state(workspace)
        state["last_run"] = {
            "at": dream_state.show_time(report.started),
            "status": report.status,
            "report": workspace.relative(path),
        }
        dream_state.write_state(workspace, state)
    plugins.event(
        workspace, Event("dream-finished", {"status": report.status, "report": str(path)})
    )
    return path


def _run(
    workspace: Workspace,
    plugins: Plugins,
    options: Options,
    report: Report,
    say: Callable[[str], None],
) -> None:
    from hippo_core.dream.apply import reconcile
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.home import index_path
    from hippo_core.index.derived import write_derived
    from hippo_core.index.ingest import ingest
    from hippo_core.packs.running import load_here

    loaded = load_here(workspace, plugins, only=options.only)
    report.packs(loaded, whole=options.only is None and options.passes is None)
    passes = loaded.passes()
    if options.passes is not None:
        passes = [p for p in passes if p.key in options.passes]
    backend = None if options.dry_run else options.backend or _backend(workspace, plugins)
    if options.transcripts is not None:
        summary = ingest(extra_dirs=options.transcripts, defaults=False, say=say)
    else:
        extra = {
            tool: tuple(str(workspace.root / Path(folder).expanduser()) for folder in folders)
            for tool, folders in workspace.settings.transcript_dirs.items()
        }
        summary = ingest(extra_dirs=extra, say=say)
    records = write_derived(index_path(), workspace)
    written = f"{records} session record{'' if records == 1 else 's'} written"
    report.add("Inputs", f"ingest: {summary.line()}; {written}")
    team_index = None
    if options.transcripts is None and not options.dry_run:
        team_index = _push_to_team(workspace, report)
    if not options.dry_run:
        for receipt, settled in reconcile(workspace):
            report.add("Applied", f"`{receipt}`: left by an interrupted run, now {settled}")
        from hippo_core.leftovers import tidy

        if removed := tidy(workspace):
            report.add("Inputs", f"removed {removed} temporary file(s) left by killed runs")
    index = team_index or TurnIndex.open(index_path(), workspace.root)
    now = options.until or datetime.now(UTC)
    saved = dream_state.read_state(workspace)
    # A failed chunk is where the next run starts, even when nothing succeeded before it.
    resume = dream_state.parse_time(saved.get("retry_from") or saved.get("last_success"))
    since = now - options.since if isinstance(options.since, timedelta) else options.since
    start = since or resume or now - dream_state.CHUNK
    pieces = dream_state.chunks(start, now)
    report.add(
        "Window",
        f"from {dream_state.show_time(start)} to {dream_state.show_time(now)}: "
        f"{len(pieces)} chunk{'s' if len(pieces) != 1 else ''} of at most 24 hours",
    )
    report.add("Window", "passes: " + (", ".join(p.key for p in passes) or "none"))
    try:
        _chunks(workspace, plugins, passes, pieces, index, backend, report, options)
    finally:
        if index is not None:
            index.close()


def _chunks(
    workspace: Workspace,
    plugins: Plugins,
    passes: list[Pass],
    pieces: list[tuple[datetime, datetime]],
    index: TurnIndex | None,
    backend: ModelBackend | None,
    report: Report,
    options: Options,
) -> None:
    views = _Sessions(workspace, index)
    for number, (chunk_start, chunk_end) in enumerate(pieces):
        chunk = Chunk(chunk_start, chunk_end)
        try:
            _chunk(workspace, plugins, passes, chunk, views, index, backend, report)
        except HippoError:
            report.add("Window", f"chunk {chunk.label()}: failed")
            for later in pieces[number + 1 :]:
                report.add("Window", f"chunk {Chunk(*later).label()}: not run")
            if not options.dry_run:
                state = dream_state.read_state(workspace)
                # A failed replay of a window dreamed already (--since) leaves the state be.
                if not _before_last_success(state, chunk.start):
                    state["retry_from"] = dream_state.show_time(chunk.start)
                    dream_state.write_state(workspace, state)
            raise
        if not options.dry_run:
            state = dream_state.read_state(workspace)
            # last_success never moves back: a replay (--since) ends where dreaming had been.
            if not _before_last_success(state, chunk.end):
                state["last_success"] = dream_state.show_time(chunk.end)
            retry = dream_state.parse_time(state.get("retry_from"))
            if retry is not None and retry < chunk.end:  # the failed chunk is dreamed now
                state.pop("retry_from")
            dream_state.write_state(workspace, state)


def _push_to_team(workspace: Workspace, report: Report) -> Any:
    """The sessions just ingested, to the team index when the workspace has one, and that
    index to read every member's sessions from (a
    :class:`~hippo_core.index.team_turns.TeamTurnIndex`); None without one. A server that is
    away is a line of the report, and the dream goes on with the local index."""
    from hippo_core.index import team
    from hippo_core.index.team_turns import TeamTurnIndex

    url = team.configured_url(workspace)
    if not url:
        return None
    made = None
    try:
        made = team.engine(url)
        pushed = team.push(workspace, url, made)
    except HippoError as exc:
        if made is not None:
            made.dispose()
        report.add("Inputs", f"{exc}; this dream reads this machine's sessions only")
        return None
    if pushed.anything:
        report.add("Inputs", pushed.line(url))
    project = team.project_of(workspace)
    report.add("Inputs", f"sessions: every member's of {project!r}, from {team.shown(url)}")
    return TeamTurnIndex(made, project, team.machine()["id"], workspace)


def _before_last_success(state: dict[str, Any], moment: datetime) -> bool:
    last = dream_state.parse_time(state.get("last_success"))
    return last is not None and moment < last


def _backend(workspace: Workspace, plugins: Plugins) -> ModelBackend:
    name = workspace.settings.model_backend
    factories = plugins.backends()
    if name not in factories:
        known = ", ".join(sorted(factories))
        raise HippoError(
            f".hippo/settings.toml: model_backend {name!r} is not a backend here; "
            f"use one of: {known}"
        )
    return factories[name](workspace)


def _chunk(
    workspace: Workspace,
    plugins: Plugins,
    passes: list[Pass],
    chunk: Chunk,
    views: _Sessions,
    index: TurnIndex | None,
    backend: ModelBackend | None,
    report: Report,
) -> None:
    sessions = views.overlapping(chunk)
    plugins.event(workspace, Event("chunk-started", {"chunk": chunk.label()}))
    replies_before = {key: (t.read, t.unreadable) for key, t in report.replies.items()}
    calls_before = report.counts["calls"] + report.counts["would call"]
    for pass_ in passes:
        if not sessions:
            continue
        why = plugins.pass_gate(workspace, pass_, chunk)
        if why:
            report.add("Window", f"chunk {chunk.label()}: {pass_.key} not run: {why}")
            continue
        runner = UnitRunner(workspace, plugins, pass_, chunk, sessions, index, backend, report)
        for note in _dreamable(workspace) if pass_.per_note else [None]:
            runner.run(note)
        runner.summarise()
    _all_unreadable(workspace, report, replies_before)
    calls = report.counts["calls"] + report.counts["would call"] - calls_before
    detail = f"{len(sessions)} session{'s' if len(sessions) != 1 else ''}"
    if not calls:
        detail += " (no model call)"
    elif backend is None:
        detail += f", {calls} prompt{'s' if calls != 1 else ''} built (dry run: no model call)"
    else:
        detail += f", {calls} model call{'s' if calls != 1 else ''}"
    report.add("Window", f"chunk {chunk.label()}: done, {detail}")
    plugins.event(workspace, Event("chunk-done", {"chunk": chunk.label()}))


def _all_unreadable(
    workspace: Workspace, report: Report, before: dict[tuple[str, str], tuple[int, int]]
) -> None:
    """Fail the chunk when, in it, no reply of a pass's proposer or reviewer could be read:
    a model that answers in another shape must not look like one that found nothing."""
    for (key, role), tally in sorted(report.replies.items()):
        read, unreadable = before.get((key, role), (0, 0))
        if tally.read == read and tally.unreadable > unreadable:
            count = tally.unreadable - unreadable
            raise HippoError(
                f"no reply of the {role} of {key} could be read ({count} in this chunk) from "
                f"{_model_named(workspace)}; the first began {tally.first}"
            )


def _model_named(workspace: Workspace) -> str:
    settings = workspace.settings
    if settings.model_backend == "command":
        return "model_command " + " ".join(settings.model_command)
    if settings.model_backend == "openai":
        return f"the openai backend at {settings.openai.url}"
    return f"the {settings.model_backend} backend"


def _dreamable(workspace: Workspace) -> list[Note]:
    """The notes a per-note pass works on: all but the session log, which hippo writes."""
    return [note for note in workspace.notes if note.path != workspace.log_note]


class _Sessions:
    """The workspace's session records with their spans in the index, read once a run."""

    def __init__(self, workspace: Workspace, index: TurnIndex | None) -> None:
        from hippo_core.sessions import session_records

        started = time.perf_counter()
        records = session_records(workspace)
        if index is not None:  # a team index has the other members' sessions too
            records += index.records()
        spans = index.sessions(r["id"] for r in records) if index else {}
        self.views: list[
            tuple[datetime | None, datetime | None, dict[str, Any], tuple[int, ...]]
        ] = []
        for record in records:
            first, last, ordinals = spans.get(record["id"], (None, None, []))
            begin = dream_state.parse_time(record.get("started")) or dream_state.parse_time(first)
            ended = dream_state.parse_time(record.get("ended"))
            times = [t for t in (begin, ended, dream_state.parse_time(last)) if t]
            self.views.append((begin, max(times, default=None), record, tuple(ordinals)))
        self.seconds = time.perf_counter() - started

    def overlapping(self, chunk: Chunk) -> list[SessionView]:
        """Sessions active during the chunk; a handoff belongs to the chunk it ended in."""
        found = []
        for begin, last, record, ordinals in self.views:
            begin = begin or last
            if begin is None or last is None or begin >= chunk.end or last < chunk.start:
                continue
            ended = dream_state.parse_time(record.get("ended"))
            here = ended is not None and chunk.start <= ended < chunk.end
            found.append(SessionView(record, ordinals, last, here))
        return found
