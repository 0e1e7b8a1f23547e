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
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.base.clock import utc_now
from hippo_core.base.errors import HippoError, UsageError
from hippo_core.dream import arrivals as arrivals_module
from hippo_core.dream import carry
from hippo_core.dream import state as dream_state
from hippo_core.dream.model import Chunk, ModelBackend, Pass, SessionView
from hippo_core.dream.packs import PackError
from hippo_core.dream.report import Report
from hippo_core.dream.unit import UnitRunner
from hippo_core.files.home import user_path
from hippo_core.plugins.events import Event

if TYPE_CHECKING:
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.notes.note import Note
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


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
    from hippo_core.files.home import hippo_home
    from hippo_core.files.locks import file_lock

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

    from hippo_core.files.home import hippo_home

    digest = hashlib.sha256(str(workspace.root.resolve()).encode("utf-8")).hexdigest()
    return hippo_home() / "locks" / f"dream-{digest[:16]}.lock"


def dream(workspace: Workspace, options: Options, say: Callable[[str], None]) -> Outcome:
    """Run the dream; the report is written whatever happens, and its path returned."""
    from hippo_core.plugins.manager import load_plugins

    with dream_lock(workspace):
        plugins = load_plugins()
        report = Report(utc_now(), options.dry_run)
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
    from hippo_core.files.home import index_path
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
            tool: tuple(str(workspace.root / user_path(folder)) for folder in folders)
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
        from hippo_core.files.leftovers import tidy

        if removed := tidy(workspace):
            report.add("Inputs", f"removed {removed} temporary file(s) left by killed runs")
    index = team_index or TurnIndex.open(index_path(), workspace.root)
    try:
        _window(workspace, plugins, passes, index, team_index, backend, report, options)
    finally:
        if index is not None:
            index.close()


@dataclass
class Work:
    """One chunk to dream: its sessions, and for a chunk of chosen turns, which passes run
    on which notes (None: every pass, on every note)."""

    chunk: Chunk
    sessions: list[SessionView]
    notes: dict[str, frozenset[str] | None] | None = None


def _window(
    workspace: Workspace,
    plugins: Plugins,
    passes: list[Pass],
    index: TurnIndex | None,
    team_index: TurnIndex | None,
    backend: ModelBackend | None,
    report: Report,
    options: Options,
) -> None:
    """The run's chunks: those carried from the last run and late arrivals first, then the
    window's, from ``last_success`` (or where a failed chunk left it) to now."""
    now = options.until or utc_now()
    saved = dream_state.read_state(workspace)
    # A failed chunk is where the next run starts, even when nothing succeeded before it.
    resume = dream_state.parse_time(saved.get("retry_from") or saved.get("last_success"))
    since = now - options.since if isinstance(options.since, timedelta) else options.since
    start = since or resume or now - dream_state.CHUNK
    pieces = dream_state.chunks(start, now)
    views = _Sessions(workspace, index)
    ahead: list[tuple[str, Work]] = []
    arrivals = None
    # A replay (--since, --until) or an eval's own transcripts dream what they are given.
    if options.since is None and options.until is None and options.transcripts is None:
        old = carry.entries(saved)
        carried = carry.chunk_of(old, passes, views.by_id, index)
        if carried is not None:
            chunk, sessions, notes = carried
            ahead.append(("carried", Work(chunk, sessions, notes)))
            shown = ", ".join(f"{e['pass']} `{e['note']}`" for e in old)
            report.add("Window", f"carried from the last run: {len(old)} change(s) ({shown})")
        arrivals = _arrivals(workspace, saved, index, team_index, start, views)
        if arrivals is not None:
            late = arrivals.chunk(views.by_id)
            if late is not None:
                ahead.append(("late", Work(*late)))
                count = len({s for s, _o in late[0].turns or ()} | set(arrivals.handoffs))
                report.add(
                    "Window",
                    f"late: {len(late[0].turns or ())} turn(s) of {count} session(s) that "
                    "reached the index after their time was dreamed",
                )
            if arrivals.restarted:
                report.add(
                    "Window",
                    "late: the local index was made anew since the last run; its arrivals "
                    "count from now",
                )
    span = pieces[-1][1] - pieces[-1][0] if pieces else dream_state.CHUNK
    longest = "at most 24 hours" if span <= dream_state.CHUNK else "the last with the "
    if span > dream_state.CHUNK:
        longest += f"{_duration(span - dream_state.CHUNK)} after it"
    report.add(
        "Window",
        f"from {dream_state.show_time(start)} to {dream_state.show_time(now)}: "
        f"{len(pieces)} chunk{'s' if len(pieces) != 1 else ''} of {longest}",
    )
    report.add("Window", "passes: " + (", ".join(p.key for p in passes) or "none"))
    run = _Run(workspace, plugins, passes, index, backend, report, options, views)
    if arrivals is not None and not any(kind == "late" for kind, _work in ahead):
        # Nothing arrived late: where arrivals stand is noted now (a failed chunk of the
        # window is dreamed again by its time, whatever arrives meanwhile).
        run.note_arrivals(arrivals)
    for kind, work in ahead:
        run.ahead(kind, work, arrivals)
    run.window(pieces)


def _arrivals(
    workspace: Workspace,
    saved: dict[str, Any],
    index: TurnIndex | None,
    team_index: TurnIndex | None,
    start: datetime,
    views: _Sessions,
) -> arrivals_module.Arrivals | None:
    """Where arrivals stand, and what arrived late; the window then reads nothing newer."""
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.files.home import index_path

    local_path = index_path()
    local = index if team_index is None else TurnIndex.open(local_path, workspace.root)
    key = ""
    if team_index is not None:
        from hippo_core.index import team

        key = f"{team.shown(team.configured_url(workspace))} {team.project_of(workspace)}"
    try:
        found = arrivals_module.take(
            saved, local, team_index, key, start, views.own, views.everyone
        )
    finally:
        if local is not None and local is not index:
            local.close()
    if index is not None:
        index.upto = found.now["team"].get(key) if team_index is not None else None
        if team_index is None and isinstance(found.now.get("local"), dict):
            index.upto = found.now["local"]["upto"]
    return found


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds < 60:
        return f"{seconds} second{'' if seconds == 1 else 's'}"
    minutes = seconds // 60
    return f"{minutes} minute{'' if minutes == 1 else 's'}"


class _Run:
    """The chunks of one run, in order, with what they share: the notes this run wrote
    (so a later change to a note lands on what an earlier one left), and the changes it
    carries to the next run."""

    def __init__(
        self,
        workspace: Workspace,
        plugins: Plugins,
        passes: list[Pass],
        index: TurnIndex | None,
        backend: ModelBackend | None,
        report: Report,
        options: Options,
        views: _Sessions,
    ) -> None:
        from hippo_core.dream.apply import Lineage

        self.workspace, self.plugins, self.passes = workspace, plugins, passes
        self.index, self.backend, self.report, self.options = index, backend, report, options
        self.views = views
        self.lineage = Lineage()
        self.carried: list[dict[str, Any]] = []
        """Changes this run carries to the next, not yet in the state."""

    def ahead(self, kind: str, work: Work, arrivals: arrivals_module.Arrivals | None) -> None:
        """Dream a chunk of chosen turns; on success, the state forgets the carried changes
        it dreamed again, or notes where arrivals stand."""
        tries = {}
        if kind == "carried":
            old = carry.entries(dream_state.read_state(self.workspace))
            tries = {(e["pass"], e["note"]): e["tries"] for e in old}
        try:
            self._dream(work, tries)
        except HippoError:
            self.report.add("Window", f"chunk {work.chunk.label()}: failed; the window not run")
            raise
        if self.options.dry_run:
            return
        state = dream_state.read_state(self.workspace)
        if kind == "carried":
            state.pop("carried", None)
        elif arrivals is not None:
            state["arrivals"] = arrivals.now
        self._save(state, work)

    def note_arrivals(self, arrivals: arrivals_module.Arrivals) -> None:
        if not self.options.dry_run:
            state = dream_state.read_state(self.workspace)
            state["arrivals"] = arrivals.now
            dream_state.write_state(self.workspace, state)

    def window(self, pieces: list[tuple[datetime, datetime]]) -> None:
        for number, (chunk_start, chunk_end) in enumerate(pieces):
            chunk = Chunk(chunk_start, chunk_end)
            work = Work(chunk, self.views.overlapping(chunk))
            try:
                self._dream(work, {})
            except HippoError:
                self.report.add("Window", f"chunk {chunk.label()}: failed")
                for later in pieces[number + 1 :]:
                    self.report.add("Window", f"chunk {Chunk(*later).label()}: not run")
                if not self.options.dry_run:
                    state = dream_state.read_state(self.workspace)
                    # A failed replay of a window dreamed already (--since) leaves it be.
                    if not _before_last_success(state, chunk.start):
                        state["retry_from"] = dream_state.show_time(chunk.start)
                        dream_state.write_state(self.workspace, state)
                raise
            if self.options.dry_run:
                continue
            state = dream_state.read_state(self.workspace)
            # last_success never moves back: a replay (--since) ends where dreaming had been.
            if not _before_last_success(state, chunk.end):
                state["last_success"] = dream_state.show_time(chunk.end)
            retry = dream_state.parse_time(state.get("retry_from"))
            if retry is not None and retry < chunk.end:  # the failed chunk is dreamed now
                state.pop("retry_from")
            self._save(state, work)

    def _dream(self, work: Work, tries: dict[tuple[str, str], int]) -> None:
        _chunk(
            self.workspace,
            self.plugins,
            self.passes,
            work,
            self.index,
            self.backend,
            self.report,
            _Settling(self.lineage, self.carried, tries, self.report),
        )

    def _save(self, state: dict[str, Any], work: Work) -> None:
        """Write the state after a chunk, with the changes it carries; then tell the team
        index (when the dream reads one) what this machine's dream has dreamed."""
        if self.carried:
            state["carried"] = [*carry.entries(state), *self.carried]
            self.carried.clear()
        dream_state.write_state(self.workspace, state)
        if self.index is None or work.chunk.kind == "carried":
            return
        handoffs = [v.id for v in work.sessions if v.ended_here and v.record.get("handoff")]
        try:
            self.index.record_dreamed(work.chunk, handoffs)
        except HippoError as exc:
            self.report.add("Inputs", f"{exc}; other members' dreams may dream it again")


@dataclass
class _Settling:
    """What a chunk's units share when they settle proposals: the run's lineage of notes,
    the changes it carries, and how often each carried one was tried already."""

    lineage: Any
    carried: list[dict[str, Any]]
    tries: dict[tuple[str, str], int]
    report: Report

    def carry(self, settled: Any) -> None:
        proposal = settled.proposal
        tries = self.tries.get((proposal.pass_key, proposal.note), 0) + 1
        if tries > carry.TRIES:
            self.report.add(
                "Applied",
                f"`{proposal.id}` `{proposal.note}`: carried {carry.TRIES} times without "
                "landing; let go",
            )
            return
        self.carried.append(carry.entry(settled, tries))


def _push_to_team(workspace: Workspace, report: Report) -> Any:
    """The sessions just ingested, to the team index when the workspace has one, and that
    index to read every member's sessions from (a
    :class:`~hippo_core.dream.team_turns.TeamTurnIndex`); None without one. A server that is
    away is a line of the report, and the dream goes on with the local index."""
    from hippo_core.dream.team_turns import TeamTurnIndex
    from hippo_core.index import team

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
    team.note_team_dream(workspace, made)
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
    work: Work,
    index: TurnIndex | None,
    backend: ModelBackend | None,
    report: Report,
    settling: _Settling,
) -> None:
    chunk, sessions = work.chunk, work.sessions
    plugins.event(workspace, Event("chunk-started", {"chunk": chunk.label()}))
    replies_before = {key: (t.read, t.unreadable) for key, t in report.replies.items()}
    calls_before = report.counts["calls"] + report.counts["would call"]
    for pass_ in passes:
        if not sessions or (work.notes is not None and pass_.key not in work.notes):
            continue
        why = plugins.pass_gate(workspace, pass_, chunk)
        if why:
            report.add("Window", f"chunk {chunk.label()}: {pass_.key} not run: {why}")
            continue
        runner = UnitRunner(
            workspace, plugins, pass_, chunk, sessions, index, backend, report, settling
        )
        wanted = work.notes.get(pass_.key) if work.notes is not None else None
        for note in _units(workspace, plugins, pass_, chunk, report):
            if wanted is None or (note is not None and note.path in wanted):
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


def _units(
    workspace: Workspace, plugins: Plugins, pass_: Pass, chunk: Chunk, report: Report
) -> list[Note | None]:
    """What ``pass_`` runs over in ``chunk``: the chunk (None), or for a per-note pass each
    dreamable note but those a plugin leaves alone, counted in the report by its reason."""
    if not pass_.per_note:
        return [None]
    notes = _dreamable(workspace)
    alone = plugins.notes_left_alone(workspace, pass_, notes)
    reasons = Counter(alone[note.path] for note in notes if note.path in alone)
    for (plugin, why), count in sorted(reasons.items()):
        report.add(
            "Inputs",
            f"{chunk.label()}, {pass_.key}: {count:,} note{'s' if count != 1 else ''} left "
            f"alone by the plugin {plugin}: {why}",
        )
    return [note for note in notes if note.path not in alone]


def _dreamable(workspace: Workspace) -> list[Note]:
    """The notes a per-note pass works on: all but the session log, which hippo writes."""
    return [note for note in workspace.notes if note.path != workspace.log_note]


class _Sessions:
    """The workspace's session records with their spans in the index, read once a run. A
    handoff another member's dream took (a team index says so) is left out."""

    def __init__(self, workspace: Workspace, index: TurnIndex | None) -> None:
        from hippo_core.agents.sessions import session_records

        started = time.perf_counter()
        records = session_records(workspace)
        self.own = frozenset(str(r["id"]) for r in records)
        if index is not None:  # a team index has the other members' sessions too
            records += index.records()
            taken = index.handoffs_dreamed()
            records = [
                {**r, "handoff": None} if r.get("handoff") and r["id"] in taken else r
                for r in records
            ]
        self.everyone = frozenset(str(r["id"]) for r in records)
        spans = index.sessions(r["id"] for r in records) if index else {}
        self.views: list[
            tuple[datetime | None, datetime | None, dict[str, Any], tuple[int, ...]]
        ] = []
        #: Each session's record and indexed ordinals, by id (this machine's first).
        self.by_id: dict[str, tuple[dict[str, Any], tuple[int, ...]]] = {}
        for record in records:
            self.by_id.setdefault(
                str(record["id"]), (record, tuple(spans.get(record["id"], (0, 0, []))[2]))
            )
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
