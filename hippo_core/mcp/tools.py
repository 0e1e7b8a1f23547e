"""hippo's own tools for an agent mid-session: each calls what the matching command calls.

``search`` is ``hippo search``, ``context`` is ``hippo context``, ``end_session`` is
``hippo session end``, and ``review_list``, ``review_show`` and ``review_decide`` are
``hippo review``; ``recall`` and ``read_note`` read notes (:mod:`hippo_core.notes.recall`).
Registered by :mod:`hippo_core.builtins.tools` through ``hippo_register_tools``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hippo_core.base.errors import UsageError
from hippo_core.plugins.tools import Tool, ToolArguments

if TYPE_CHECKING:
    from hippo_core.workspace.folder import Workspace

#: Bounds on what an agent may send: words to look for, ids, paths, and prose.
QUERY, NAME, PATH, PROSE = 2_000, 300, 1_000, 20_000

Query = Annotated[str, Field(min_length=1, max_length=QUERY)]
Prose = Annotated[str, Field(max_length=PROSE)]
Id = Annotated[str, Field(min_length=1, max_length=NAME)]
NotePath = Annotated[str, Field(min_length=1, max_length=PATH)]
#: A proposal's or a draft's id names a file below .hippo/: no folder in it.
ItemId = Annotated[str, Field(max_length=NAME, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]


class SearchArguments(ToolArguments):
    query: Query = Field(description="Words to find in the indexed turns (word* for a prefix).")
    tool: Id | None = Field(None, description="Only this agent's turns (claude-code, codex, ...).")
    session: Id | None = Field(None, description="Only this session's turns.")
    since: Id | None = Field(
        None, description="Only turns since a date (2026-11-01), a time, or 24h/7d/2w ago."
    )
    limit: int = Field(20, ge=1, le=100, description="At most this many turns, best first.")


def search(workspace: Workspace, given: SearchArguments) -> dict[str, Any]:
    from hippo_core.index.search import find_turns

    hits = find_turns(
        given.query, tool=given.tool, session=given.session, since=given.since, limit=given.limit
    )
    return {"query": given.query, "turns": [asdict(hit) for hit in hits]}


class RecallArguments(ToolArguments):
    query: Query = Field(description="What the notes should be about, in words.")
    limit: int = Field(5, ge=1, le=50, description="At most this many notes, best first.")
    max_bytes: int = Field(
        16_000, ge=1, le=1_000_000, description="The notes' texts together stay within this."
    )


def recall(workspace: Workspace, given: RecallArguments) -> dict[str, Any]:
    from hippo_core.notes.recall import recall as ranked

    return ranked(workspace, given.query, limit=given.limit, max_bytes=given.max_bytes)


class ReadNoteArguments(ToolArguments):
    path: NotePath = Field(
        description="The note's path from the notes folder (Deploy.md) or the workspace."
    )
    max_bytes: int = Field(
        100_000, ge=1, le=10_000_000, description="Cut the text at this many bytes."
    )


def read_note(workspace: Workspace, given: ReadNoteArguments) -> str:
    from hippo_core.notes.recall import read_note as read

    return read(workspace, given.path, max_bytes=given.max_bytes)


class ContextArguments(ToolArguments):
    task: Prose | None = Field(None, description="What the session is about.")
    session: Id | None = Field(None, description="The session's id, for its session line.")
    budget: int | None = Field(
        None, ge=1, le=10_000_000, description="Budget in bytes (default: budget_bytes)."
    )


def context(workspace: Workspace, given: ContextArguments) -> str:
    from hippo_core.context.build import build_context

    block = build_context(workspace, task=given.task, session=given.session, budget=given.budget)
    return block.text + "".join(f"{omission.render()}\n" for omission in block.omitted)


class EndSessionArguments(ToolArguments):
    session: Id | None = Field(
        None, description="The session's id (default: the latest open declared session)."
    )
    notes: list[NotePath] = Field(
        [], max_length=500, description="Notes the session touched, as paths from the workspace."
    )
    handoff: Prose | None = Field(None, description="What the next session should know.")
    no_change: Prose | None = Field(None, description="Why the session changed nothing.")


def end_session(workspace: Workspace, given: EndSessionArguments) -> dict[str, Any]:
    from hippo_core.agents.sessions import end_session as end

    record = end(
        workspace,
        given.session,
        notes=given.notes,
        handoff=given.handoff,
        no_change=given.no_change,
    )
    keys = ("id", "tool", "started", "ended", "end_reason", "notes", "handoff", "no_change")
    return {key: record.get(key) for key in keys}


class ReviewListArguments(ToolArguments):
    pass


def review_list(workspace: Workspace, given: ReviewListArguments) -> dict[str, Any]:
    from hippo_core.actions.review import review_items
    from hippo_core.plugins.manager import load_plugins

    return {"waiting": review_items(workspace, load_plugins())}


class ReviewShowArguments(ToolArguments):
    id: ItemId = Field(description="A proposal's or a draft's id, as review_list gives it.")


def review_show(workspace: Workspace, given: ReviewShowArguments) -> dict[str, Any]:
    from hippo_core.actions.review import show
    from hippo_core.plugins.manager import load_plugins

    kind, view = show(workspace, load_plugins(), given.id)
    return {"type": kind, "item": view}


class Decision(BaseModel):
    """One part of a draft decided: the operation, approve or deny, and why; any other key
    the queue documents (``edited_content`` on a last attempt) is passed on as given."""

    model_config = ConfigDict(extra="allow", strict=True)

    op: int = Field(description="The operation's index in the draft.")
    verdict: str = Field(max_length=NAME, description="approve or deny.")
    critique: Prose | None = Field(None, description="What to change: required to deny.")
    note: Prose | None = Field(None, description="Why, for the record.")


class ReviewDecideArguments(ToolArguments):
    id: ItemId = Field(description="A proposal's or a draft's id, as review_list gives it.")
    verdict: Literal["confirm", "reject"] | None = Field(
        None, description="For a proposal: confirm (apply it) or reject."
    )
    decisions: list[Decision] | None = Field(
        None, min_length=1, max_length=500, description="For a draft: a decision per operation."
    )
    notes: Prose = Field("", description="Why, for the record.")


def review_decide(workspace: Workspace, given: ReviewDecideArguments) -> dict[str, Any]:
    from hippo_core.actions.review import decide_proposal, queue_of
    from hippo_core.agents.deciders import tool_call
    from hippo_core.dream import queue as proposals
    from hippo_core.plugins.manager import load_plugins

    by = tool_call(workspace, "review_decide")
    if given.verdict is not None and given.decisions is not None:
        raise UsageError("give verdict (for a proposal) or decisions (for a draft), not both")
    plugins = load_plugins()
    queue = queue_of(workspace, plugins, given.id)
    if queue is not None:
        if given.decisions is None:
            raise UsageError(
                f"{given.id} is a {queue.name}: decide each operation with decisions, "
                '[{"op": 0, "verdict": "approve"}, {"op": 1, "verdict": "deny", "critique": ...}]'
            )
        decisions = [d.model_dump(exclude_none=True) for d in given.decisions]
        return queue.decide(workspace, plugins, given.id, decisions, given.notes, by=by)
    proposals.load(workspace, given.id)  # an id that is neither a draft nor a proposal: one line
    if given.verdict is None:
        raise UsageError(f"{given.id} is a proposal: give verdict confirm or reject")
    return decide_proposal(workspace, plugins, given.id, given.verdict, given.notes, by=by)


TOOLS = (
    Tool(
        "search",
        "Search the indexed agent turns (what agents were asked and did) and return the best "
        "matches with snippets.",
        SearchArguments,
        search,
    ),
    Tool(
        "recall",
        "Return the notes that best match a query, best first, with their text within a byte "
        "limit.",
        RecallArguments,
        recall,
    ),
    Tool("read_note", "Return the text of one note, by its path.", ReadNoteArguments, read_note),
    Tool(
        "context",
        "Return the context block for a session: the entry note's opening, the required "
        "notes, the notes relevant to a task and the linter counts.",
        ContextArguments,
        context,
    ),
    Tool(
        "end_session",
        "End a declared session, recording the notes it touched, a handoff for the next "
        "session, or why it changed nothing.",
        EndSessionArguments,
        end_session,
    ),
    Tool(
        "review_list",
        "List the proposals and drafts waiting for a verdict.",
        ReviewListArguments,
        review_list,
    ),
    Tool(
        "review_show",
        "Show one proposal or draft as its reviewer sees it.",
        ReviewShowArguments,
        review_show,
    ),
    Tool(
        "review_decide",
        "Decide a proposal (confirm or reject) or a draft (approve or deny each operation), "
        "as hippo review does.",
        ReviewDecideArguments,
        review_decide,
    ),
)
