# Hookspecs have no body: pluggy calls the implementations, never these.
# mypy: disable-error-code="empty-body"
"""Every hook hippo calls. Built-in features implement them exactly as third parties do.

A plugin is a module or object with functions marked ``@hippo_core.hookimpl`` whose names
are the hooks below; a distribution offers one through an entry point in the group ``hippo``.
hippo calls a hook's implementations in the order their plugins were registered: its own
first, then installed distributions' (``@hookimpl(tryfirst=True)`` comes before them all,
``trylast=True`` after). So where plugins register things by name, hippo's own keep theirs.
"""

from __future__ import annotations

from collections.abc import Callable

from hippo_core.plugins.markers import hookspec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from hippo_core.actions.review_queues import ReviewQueue
    from hippo_core.base.findings import Finding
    from hippo_core.context.budget import ContextPart
    from hippo_core.dream.model import (
        Applier,
        Chunk,
        ModelBackend,
        Pass,
        ProposalKind,
        Reader,
        Reviewer,
        Validator,
    )
    from hippo_core.notes.note import Note
    from hippo_core.plugins.agent import Agent
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.tools import Tool
    from hippo_core.workspace.folder import Workspace

BackendFactory = Callable[["Workspace"], "ModelBackend"]


@hookspec
def hippo_register_commands(register: Callable[[str, str, str], None]) -> None:
    """Add commands to ``hippo``, as ``register(name, "module:attribute", help)``.

    Called when the ``hippo`` command line starts (not for the agents' hooks and ``hippo
    context``, which run before plugins are asked). ``name`` is the word after ``hippo``;
    ``help`` is one whole sentence, which ``hippo --help`` lists without importing anything.
    The module is imported only when the command runs or shows its own help; the attribute
    is a ``typer.Typer`` app (a group of subcommands, or one command), a click command, or
    a plain function that typer turns into a command. The first plugin to register a name
    wins (hippo's own commands are registered first); ``hippo doctor`` names a plugin whose
    command was left out. Returns nothing.
    """


@hookspec
def hippo_register_tools(register: Callable[[Tool], None]) -> None:
    """Add tools to ``hippo mcp``, the MCP server an agent calls mid-session, as
    ``register(tool)``.

    Called when ``hippo mcp`` starts, and by whatever lists the tools; never on an agent's
    hot path. A :class:`~hippo_core.plugins.tools.Tool` is a name, one sentence saying what it
    does, a pydantic model of its arguments (its JSON schema is what the agent sees) and a
    function ``run(workspace, arguments)`` returning text or JSON-able data. The server
    validates the arguments against the model, opens the workspace afresh for every call
    and turns a :class:`~hippo_core.base.errors.HippoError` (or any other exception) into a tool
    error of one line. The first plugin to register a name wins (hippo's own tools are
    registered first). Returns nothing.
    """


@hookspec
def hippo_register_packs(register: Callable[[str, Path], None]) -> None:
    """Register packs this plugin ships, as ``register(name, directory)``.

    Called once when hippo needs the list of packs it can install (``hippo init`` takes the
    one named ``core`` from here). The directory holds ``passes/``, ``prompts/`` and
    ``personas/``. Returns nothing.
    """


@hookspec
def hippo_register_agents(register: Callable[[Agent], None]) -> None:
    """Register coding agents, as ``register(agent)``: everything hippo does with one agent.

    An :class:`~hippo_core.plugins.agent.Agent` bundles the agent's name (the ``--tool`` of
    ``hippo hook``), its transcript sources, the hook settings file and events ``hippo hooks
    install`` writes, the MCP config ``hippo mcp install`` writes, what ``hippo doctor``
    checks of it and the variables that say it runs a process; an agent hippo only reads the
    transcripts of is a name and its sources. Called by ``hippo ingest``,
    ``hippo hooks``, ``hippo mcp install``, ``hippo doctor`` and, for an agent hippo does not
    ship, by its hooks (which read its session ids and output shape). hippo's own agents are
    registered first, and the first agent registered under a name wins; an agent registered
    wrong is left out and named by ``hippo doctor``. Returns nothing.
    """


@hookspec
def hippo_context_parts(
    workspace: Workspace, session: str | None, task: str | None
) -> list[ContextPart]:
    """Contribute parts of the context block for a session starting in ``workspace``.

    Called by ``hippo context`` (and the session hooks) with the session id and the task
    given, each possibly None. Returns a list of :class:`~hippo_core.context.budget.ContextPart`;
    hippo sorts every plugin's parts by ``order`` and fits the optional ones to the budget.
    A part's text may be a function that makes it: it is called only when the part is
    needed (the session-start hook prints only required parts, the prompt hook only
    optional ones), so costly text belongs in one. A plugin that has nothing to say
    returns an empty list.
    """


@hookspec
def hippo_lint_note(workspace: Workspace, note: Note) -> list[Finding]:
    """Check one note; return its :class:`~hippo_core.base.findings.Finding` list.

    Called for every note by ``hippo notes lint``, ``hippo doctor`` and the linter counts of
    ``hippo context``. ``workspace.notes`` resolves links. Findings name the note's
    workspace-relative path in ``where``.
    """


@hookspec
def hippo_doctor_checks(workspace: Workspace) -> list[Finding]:
    """Check the workspace as a whole; return findings for ``hippo doctor``.

    Called once per ``hippo doctor`` run. An ``error`` finding makes doctor exit 1; warnings
    and ``info`` lines are shown but do not.
    """


@hookspec
def hippo_register_readers(register: Callable[[str, Reader], None]) -> None:
    """Register readers, as ``register(name, reader)``: ``{{name}}`` in a prompt is its text.

    Called when a dream loads its packs: a pass may read only registered readers, and its
    prompt may use only the placeholders its ``reads`` lists. A reader
    (:class:`~hippo_core.dream.model.Reader`) returns whole blocks of text; hippo fits them
    to the pass's input budget and records what was left out. The first reader registered
    under a name wins. Returns nothing.
    """


@hookspec
def hippo_register_kinds(register: Callable[[ProposalKind], None]) -> None:
    """Register kinds of change, as ``register(kind)`` (``replace`` and ``append`` built in).

    Called when a dream or ``hippo review`` checks and applies proposals: a proposal's
    ``kind`` selects the :class:`~hippo_core.dream.model.ProposalKind` whose ``check``
    validates it and whose ``apply`` computes the note's new bytes. Returns nothing.
    """


@hookspec
def hippo_register_validators(register: Callable[[Validator], None]) -> None:
    """Register checks every proposal must pass before review, as ``register(validator)``.

    Called when a dream checks the proposals parsed from a model's reply. Validators run
    in the order they were registered (hippo's own first: note, evidence, kind, text
    humans confirmed); the first that returns problems stops the chain, and the proposal
    goes to the report's "Validation failures" and is never reviewed. Returns nothing.
    """


@hookspec
def hippo_register_reviewers(register: Callable[[Reviewer], None]) -> None:
    """Register reviewers, as ``register(reviewer)``; a pass's ``review`` key names one, or
    a chain of them (``review = ["secret-scan", "model"]``).

    Called when a dream sends a valid proposal to review. ``model`` asks a second model
    run with the pass's persona as the system prompt; ``queue`` answers ``pending`` and
    leaves the verdict to ``hippo review`` (so it can only end a chain). In a chain each
    reviewer must confirm, in order; the first that does not ends it, and the receipt
    records every step. A reviewer that raises rejects the change, naming the exception.
    The proposal is written to ``.hippo/proposals/`` before any reviewer sees it: a check
    for secrets belongs in a validator, which runs before. Returns nothing.
    """


@hookspec
def hippo_register_appliers(register: Callable[[Applier], None]) -> None:
    """Register appliers, as ``register(applier)``: steps that land a confirmed change.

    Called when a dream or ``hippo review`` lands a confirmed change, and by ``hippo
    revert``. The steps run in order: hippo's own ``note`` first (the snapshot and the
    atomic write, or the write of a new note), then the plugins', in the order they were
    registered; each is given the :class:`~hippo_core.dream.model.Change` (the note, its
    bytes and digests before and after, the proposal, the verdict, the receipt). A plugin's
    applier can stage the note in git, or post the change for review elsewhere. The receipt
    records each step (``done``, ``failed`` with what it raised, ``not run``); a step that
    raises stops the chain, and the note stays as the steps before it left it. A step a
    killed process left unfinished is recorded as ``interrupted`` by the next run. ``hippo
    revert`` calls each applier's ``revert`` after it put the note back. The first
    applier registered under a name wins. Returns nothing.
    """


@hookspec
def hippo_register_backends(register: Callable[[str, BackendFactory], None]) -> None:
    """Register model backends, as ``register(name, factory)``.

    Called when a dream or an eval needs a model: ``model_backend`` in the settings names
    the backend, and ``factory(workspace)`` returns a
    :class:`~hippo_core.dream.model.ModelBackend` configured from the workspace settings
    (raising :class:`~hippo_core.base.errors.HippoError` when they are incomplete). Returns
    nothing.
    """


@hookspec
def hippo_event(workspace: Workspace, event: Event) -> None:
    """Hear what happens during a dream and a review, one :class:`Event` at a time.

    Called as each step completes (a chunk started, a proposal written, a verdict given,
    a change about to be applied, applied or not, a revert, the dream finished), with the
    ids and paths involved in ``event.data``; and ``setting_changed`` when ``hippo config
    set`` changed a plugin's key (``key``, ``from``, ``to``, and ``by``, who ran it). A
    plugin uses it to log or notify; what it returns is ignored, and an exception in it
    fails the command that sent the event.
    """


@hookspec(firstresult=True)
def hippo_pass_gate(workspace: Workspace, pass_: Pass, chunk: Chunk) -> str | None:
    """Say whether ``hippo dream`` runs ``pass_`` over ``chunk``: None lets it run, a
    sentence says why it does not (the dream's report shows it under Window).

    Called by ``hippo dream`` for every pass of every chunk, before any reader or model; the
    first plugin that answers decides. The sleep pack answers for its own passes, which run from
    ``hippo sleep`` when a brief is open and no chain is.
    """


@hookspec(firstresult=True)
def hippo_verdict_refused(
    workspace: Workspace, item: dict[str, Any], verdict: str, by: dict[str, Any]
) -> str | None:
    """Say whether ``by`` may give ``verdict`` on a queued proposal: None lets it, a
    sentence refuses it (``hippo review`` and ``review_decide`` answer with it, and nothing
    is recorded).

    Called by ``hippo review`` and the MCP tool ``review_decide`` before a verdict on a
    proposal the ``queue`` reviewer holds is written; ``item`` is the proposal's record,
    ``verdict`` ``confirm`` or ``reject``, ``by`` who decides
    (:data:`hippo_core.agents.deciders.Decider`). The first plugin that answers decides. The sleep
    pack refuses a confirmation by anyone but a person while its ``review = "person"``
    is in force: one switch for every queue.
    """


@hookspec
def hippo_notes_left_alone(workspace: Workspace, pass_: Pass, notes: list[Note]) -> dict[str, str]:
    """Say which of ``notes`` the per-note pass ``pass_`` leaves alone, and why: a dict of
    note path (relative to ``notes_dir``, as in :class:`~hippo_core.notes.note.Note`) to one
    sentence; an empty dict leaves every note to the pass.

    Called by ``hippo dream`` for every per-note pass of every chunk with sessions, before
    any reader or model, with the notes the pass would work on. A note left alone is no unit
    of the pass: nothing is read for it, no prompt is built, and the pass proposes no change
    to it. Every plugin is asked, and a note any of them names is left alone, with the first
    reason given; the report counts the notes left alone under each plugin's reason. The
    sleep pack leaves its cores to the sleep cycle, which changes them only through its
    reviewed drafts.
    """


@hookspec
def hippo_register_settings(register: Callable[[str, type], None]) -> None:
    """Own a table of ``.hippo/settings.toml``, as ``register(table, model)``.

    Called when a plugin reads its table (with :func:`hippo_core.settings_table`)
    and by ``hippo doctor``. ``model`` is a pydantic model class for the table's keys
    (defaults, checks, clamps): a key it does not have is ignored and named with where it
    likely belongs, a value of the wrong type is an error. hippo keeps a table it does not
    know as written until its owner reads it, and doctor names a table no plugin owns. The
    first plugin to register a table owns it. Returns nothing.
    """


@hookspec
def hippo_local_paths(workspace: Workspace) -> list[str]:
    """Workspace-relative paths this plugin writes that are machine state, not decisions.

    Called by ``hippo init``, which adds them to ``.gitignore``, and by ``hippo doctor``,
    which warns when git tracks one, as for hippo's own snapshots and session records. A
    folder ends with ``/``.
    """


@hookspec
def hippo_register_review_queues(register: Callable[[ReviewQueue], None]) -> None:
    """Add items to ``hippo review``, as ``register(queue)``.

    Called when ``hippo review`` lists, shows or decides. A
    :class:`~hippo_core.actions.review_queues.ReviewQueue` lists what waits for a verdict, shows one
    item as its reviewer sees it and records decisions on its parts (``--approve``,
    ``--deny``, ``--decisions``). Single proposals are hippo's own queue; the sleep pack's
    drafts are another. Returns nothing.
    """


@hookspec
def hippo_register_eval_runners(register: Callable[[str, Any], None]) -> None:
    """Run a pack's eval cases another way, as ``register(pack, runner)``.

    Called by ``hippo eval pack`` for a pack whose cases are not dreams over transcripts
    (the sleep pack's are fragments, a brief and the operations a good sleep drafts).
    ``runner.run_case(case_folder, *, pack, pack_root, mode, workspace, plugins)`` returns a
    :class:`~hippo_core.packs.evals_result.CaseResult` with the same meaning for its counts
    (proposals, invalid, applied, matched, expected, verdicts, agreed, calls), so the rates
    read the same. ``mode`` is ``live``, ``record`` or ``replay``. The first runner
    registered for a pack wins. Returns nothing.
    """


@hookspec
def hippo_register_schedule_jobs(
    register: Callable[..., None],
) -> None:
    """Offer a job to ``hippo schedule install``, as ``register(name, every, args, help,
    pack="")``.

    Called when ``hippo schedule install`` builds its options. ``name`` (lower-case letters,
    digits and ``-``, such as ``sleep-tick``) becomes the option ``--<name>`` and the job's
    name in the scheduler's files; ``every`` is how often it runs, a span as
    ``--dream-every`` takes it (``5m``); ``args`` are hippo's arguments (``("sleep",
    "tick")``), run in the workspace like ``hippo dream``; ``help`` is the option's one
    sentence; ``pack``, when given, is a pack the job cannot run without (the sleep pack's
    ``sleep``): install refuses the job in a workspace where that pack does not run. A job
    runs beside the dream, never instead of it, and the schedulers show it by its arguments.
    The first plugin to register a name wins. Returns nothing.
    """
