"""One pass over one unit of a chunk (a note, or the whole chunk): inputs, prompt, model,
proposals, checks, review, receipts. Times go to the report by phase."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hippo_core.dream import receipts
from hippo_core.dream.model import (
    CheckContext,
    Chunk,
    Item,
    ModelBackend,
    Pass,
    Proposal,
    ReadContext,
    ReviewRequest,
    SessionView,
    TurnText,
    Verdict,
)
from hippo_core.dream.packs import read_system
from hippo_core.dream.report import Report
from hippo_core.plugins.events import Event

if TYPE_CHECKING:
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.notes.note import Note
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

NONE_TEXT = "(none)\n"


class UnitRunner:
    """Runs one pass over the units of one chunk, adding what happens to the report."""

    def __init__(
        self,
        workspace: Workspace,
        plugins: Plugins,
        pass_: Pass,
        chunk: Chunk,
        sessions: list[SessionView],
        index: TurnIndex | None,
        backend: ModelBackend | None,
        report: Report,
        settling: Any = None,
    ) -> None:
        self.workspace, self.plugins, self.pass_ = workspace, plugins, pass_
        self.chunk, self.sessions, self.index = chunk, sessions, index
        self.backend, self.report = backend, report
        #: What the run's units share when they settle (``run._Settling``): the notes it
        #: wrote and the changes it carries; None settles each proposal on its own.
        self.settling = settling
        all_readers = plugins.readers()
        self.readers = {name: all_readers[name] for name in pass_.reads}
        self.idle: Counter[str] = Counter()
        self.turns: dict[tuple[str, int], TurnText | None] = {}
        self.ids = frozenset(view.id for view in sessions)
        #: The turns the prompt of the unit running now showed (:meth:`_shown`).
        self.shown: frozenset[tuple[str, int]] = frozenset()
        #: The pass's instructions, sent as the system prompt (None: all in the prompt).
        self.system = read_system(pass_)
        self.system_bytes = len(self.system.encode("utf-8")) if self.system else 0

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.report.seconds[name] = self.report.seconds.get(name, 0.0) + (
                time.perf_counter() - started
            )

    def where(self, note: Note | None) -> str:
        unit = f", note `{note.path}`" if note else ""
        return f"{self.chunk.label()}, {self.pass_.key}{unit}"

    # -- inputs and prompt ---------------------------------------------------------------

    def _read(self, note: Note | None) -> dict[str, list[Item]] | None:
        """Every reader's items; None as soon as an essential reader has nothing."""
        context = ReadContext(
            self.workspace, self.pass_, self.chunk, note, self.sessions, self.index, self.ids
        )
        items: dict[str, list[Item]] = {}
        for name, reader in self.readers.items():
            found = reader.read(context)
            if reader.essential and not found:
                self.idle[context.passed_over or f"no {name}"] += 1
                return None
            items[name] = found
        return items

    def _fit(
        self, items: dict[str, list[Item]], note: Note | None
    ) -> tuple[str, list[Item]] | None:
        from hippo_core.dream.render import render_prompt

        # Every placeholder starts as "(none)": the text of a reader that keeps nothing.
        empty = {name: NONE_TEXT for name in self.readers}
        base = len(render_prompt(self.pass_, empty).encode("utf-8")) - len(NONE_TEXT) * len(empty)
        base += self.system_bytes  # the budget holds the whole input the model reads
        room = self.pass_.input_budget_bytes - base
        order = sorted(items, key=lambda n: not any(i.note for i in items[n]))
        texts: dict[str, str] = {}
        kept_all: list[Item] = []
        for name in order:
            kept, left = [], []
            for item in items[name]:
                if item.size + 1 <= room:
                    kept.append(item)
                    room -= item.size + 1
                else:
                    left.append(item)
            if left:
                self._omit(note, name, left, len(items[name]))
            if self.readers[name].essential and not kept:
                self.idle[f"nothing from {name} fits the input budget"] += 1
                return None
            texts[name] = "\n".join(i.text for i in kept) if kept else NONE_TEXT
            kept_all += kept
        prompt = render_prompt(self.pass_, texts)
        size = len(prompt.encode("utf-8")) + self.system_bytes
        if size > self.pass_.input_budget_bytes:
            self.report.add(
                "Omissions",
                f"{self.where(note)}: the prompt is {size:,} bytes, over the input budget "
                f"of {self.pass_.input_budget_bytes:,}; not sent",
            )
            return None
        return prompt, kept_all

    def _omit(self, note: Note | None, name: str, left: list[Item], total: int) -> None:
        size = sum(i.size for i in left)
        shown = ", ".join(i.label for i in left[:3])
        more = f" and {len(left) - 3:,} more" if len(left) > 3 else ""
        self.report.add(
            "Omissions",
            f"{self.where(note)}: {name}: {len(left):,} of {total:,} blocks left out "
            f"({size:,} bytes) to keep within the input budget: {shown}{more}",
        )

    # -- one unit ------------------------------------------------------------------------

    def run(self, note: Note | None) -> None:
        with self.phase("search"):
            items = self._read(note)
        if items is None:
            return
        with self.phase("rendering"):
            fitted = self._fit(items, note)
        if fitted is None:
            return
        prompt, kept = fitted
        prompt_notes = {i.note: i.digest or "" for i in kept if i.note}
        self.shown = self._shown(kept)
        for item in kept:
            for turn in item.turns:
                self.turns[(turn.session, turn.ordinal)] = turn
        size = len(prompt.encode("utf-8"))
        if self.backend is None:
            self.report.counts["would call"] += 1
            if self.report.keep_prompts:
                self.report.prompts.append((self.where(note), prompt))
            self.report.add(
                "Inputs", f"{self.where(note)}: prompt of {size:,} bytes (dry run: not sent)"
            )
            return
        with self.phase("model"):
            reply = self.backend.complete(prompt, system=self.system)
        self.report.counts["calls"] += 1
        self.report.add(
            "Inputs",
            f"{self.where(note)}: prompt of {size:,} bytes; reply {reply.call.bytes_out:,} bytes "
            f"in {reply.call.seconds:.1f} s",
        )
        self._proposals(
            note,
            reply.text if not reply.too_large else None,
            reply.call.as_dict(),
            prompt_notes,
            size,
        )

    def _proposals(
        self,
        note: Note | None,
        text: str | None,
        call: dict[str, Any],
        prompt_notes: dict[str, str],
        size: int,
    ) -> None:
        from hippo_core.dream.proposals import parse_reply, to_proposals

        where = self.where(note)
        with self.phase("validation"):
            elements: list[Any]
            if text is None:
                elements, problem = [], "the reply was too large to read"
            else:
                elements, problem = parse_reply(text)
            self.report.reply(self.pass_.key, "proposer", text or "", problem)
            if problem:
                self.report.add("Validation failures", f"{where}: {problem}")
                return
            kinds = self.plugins.kinds()
            valid, rejected = to_proposals(
                elements, pass_key=self.pass_.key, kinds=kinds, ids=receipts.new_id
            )
            for bad in rejected:
                self.report.add(
                    "Validation failures", f"{where}: reply element {bad.index}: {bad.problem}"
                )
            checks = CheckContext(
                self.workspace,
                prompt_notes,
                self._turn,
                kinds,
                lambda path: receipts.confirmed_texts(self.workspace, path),
                prompt_evidence=self.shown,
                session_text=self._session_text,
            )
            passed = []
            for proposal in valid:
                problems = self._check(proposal, checks)
                if problems:
                    self.report.add(
                        "Validation failures",
                        f"{where}: `{proposal.note}` ({proposal.kind}): " + "; ".join(problems),
                    )
                    self.plugins.event(self.workspace, Event("invalid", {"note": proposal.note}))
                else:
                    passed.append(proposal)
        for proposal in passed:
            proposal = self._whose(proposal)
            self._review(proposal, prompt_notes.get(proposal.note, ""), call, size)

    def _shown(self, kept: list[Item]) -> frozenset[tuple[str, int]]:
        """The turns a prompt of ``kept`` showed: its turns, and the chunk's turns of the
        sessions it showed. Evidence must be among them."""
        shown = {(t.session, t.ordinal) for item in kept for t in item.turns}
        sessions = {sid for item in kept for sid in item.sessions}
        for view in self.sessions:
            if view.id in sessions:
                shown.update((view.id, ordinal) for ordinal in view.ordinals)
        return frozenset(shown)

    def _handoffs(self, proposal: Proposal) -> tuple[tuple[str, str], ...]:
        """The handoffs the prompt showed of the proposal's evidence sessions."""
        wanted = dict.fromkeys(e.session for e in proposal.evidence)
        return tuple(
            (view.id, view.record["handoff"])
            for view in self.sessions
            if view.id in wanted and view.ended_here and isinstance(view.record.get("handoff"), str)
        )

    def _session_text(self, session: str) -> str:
        """What the chunk shows of ``session``: its times and task, and its handoff when
        it ended in the chunk."""
        for view in self.sessions:
            if view.id == session:
                record = view.record
                times = [record.get("started"), record.get("ended")]
                days = [time[:10] for time in times if isinstance(time, str)]
                shown = [*times, *days, record.get("task")]
                if view.ended_here:
                    shown.append(record.get("handoff"))
                return "\n".join(str(value) for value in shown if isinstance(value, str))
        return ""

    def _turn(self, session: str, ordinal: int) -> TurnText | None:
        key = (session, ordinal)
        if key not in self.turns:
            self.turns[key] = self.index.turn(session, ordinal) if self.index else None
        return self.turns[key]

    def _whose(self, proposal: Proposal) -> Proposal:
        """The proposal with each evidence turn's member, when a team index gave one."""
        from dataclasses import replace

        evidence = tuple(
            replace(e, who=turn.who) if (turn := self._turn(e.session, e.ordinal)) else e
            for e in proposal.evidence
        )
        return replace(proposal, evidence=evidence) if evidence != proposal.evidence else proposal

    def _check(self, proposal: Proposal, checks: CheckContext) -> list[str]:
        for validator in self.plugins.validators():
            problems = validator.check(proposal, checks)
            if problems:
                return problems
        return []

    def _review(self, proposal: Proposal, digest: str, call: dict[str, Any], size: int) -> None:
        from hippo_core.dream.apply import settle
        from hippo_core.dream.packs import read_persona
        from hippo_core.dream.review import verdict_record
        from hippo_core.dream.reviewers import review_chain
        from hippo_core.dream.risky import held_because

        workspace = self.workspace
        with self.phase("writing"):
            receipts.create_once(
                receipts.folder(workspace, "proposals") / f"{proposal.id}.json",
                {
                    **proposal.as_dict(),
                    "created": receipts.now(),
                    "chunk": self.chunk.label(),
                    "prompt": {"bytes": size, "note_digest": digest},
                    "proposer": call,
                    "review": _chain_shown(self.pass_.reviews),
                    "persona": self.pass_.reviewer,
                },
            )
        self.report.add(
            "Proposals",
            f"`{proposal.id}` {proposal.pass_key} {proposal.kind} `{proposal.note}` (evidence: "
            + ", ".join(
                f"{e.session} turn {e.ordinal}" + (f" by {e.who}, a teammate" if e.who else "")
                for e in proposal.evidence
            )
            + ")",
        )
        self.plugins.event(workspace, Event("proposal", {"proposal": proposal.id}))
        # A create's note does not exist yet: the reviewer sees it as empty.
        note_path = workspace.notes_dir / proposal.note
        note_text = note_path.read_text(encoding="utf-8") if note_path.exists() else ""
        evidence = tuple(t for e in proposal.evidence if (t := self._turn(e.session, e.ordinal)))
        persona = read_persona(self.pass_)
        request = ReviewRequest(
            workspace,
            self.pass_,
            persona,
            proposal.note,
            note_text,
            proposal,
            evidence,
            self.backend,
            self._handoffs(proposal),
        )
        with self.phase("model"):
            verdict: Verdict = review_chain(self.plugins, self.pass_.reviews, request)
        held = held_because(workspace, proposal, note_text, evidence)
        if held and verdict.verdict == "confirm":
            # Confirmed by the pass, and still a person's to land (risky_review = "person").
            steps = verdict.steps or (verdict,)
            verdict = Verdict("person", "pending", f"waits for a person: {held}", steps=steps)
        for step in verdict.steps or (verdict,):
            if step.call is not None:  # a model answered (the queue reviewer makes no call)
                self.report.counts["calls"] += 1
                self.report.reply(self.pass_.key, "reviewer", step.reply, step.problem)
        with self.phase("writing"):
            receipts.write(
                receipts.folder(workspace, "reviews") / f"{proposal.id}.json",
                verdict_record(
                    proposal.id,
                    verdict,
                    self.pass_.reviewer,
                    receipts.now(),
                    **_persona_source(self.pass_, persona),
                ),
            )
        self.report.add("Verdicts", f"`{proposal.id}` {_verdict_line(verdict)}")
        self.plugins.event(
            workspace, Event("verdict", {"proposal": proposal.id, "verdict": verdict.verdict})
        )
        if verdict.verdict == "pending":
            return
        invocation = {
            "command": "hippo dream",
            "chunk": self.chunk.label(),
            "prompt_bytes": size,
            "proposer": call,
            "reviewer": verdict.call.as_dict() if verdict.call else None,
        }
        with self.phase("writing"):
            settled = settle(
                workspace,
                self.plugins,
                proposal,
                verdict,
                prompt_digest=digest,
                persona=self.pass_.reviewer,
                invocation=invocation,
                lineage=self.settling.lineage if self.settling else None,
                evidence=evidence,
            )
        if settled.carried and self.settling is not None:
            self.settling.carry(settled)
        line = f"`{proposal.id}` `{proposal.note}`: {settled.state}"
        if settled.detail and settled.state != "rejected":
            line += f" ({settled.detail})"
        line += f"; receipt {workspace.relative(settled.receipt)}"
        self.report.add("Applied", line)

    def summarise(self) -> None:
        for why, count in sorted(self.idle.items()):
            unit = "note" if self.pass_.per_note else "prompt"
            units = unit if count == 1 else unit + "s"
            self.report.add(
                "Inputs",
                f"{self.chunk.label()}, {self.pass_.key}: {count:,} {units} with {why} "
                "(no model call)",
            )


def _chain_shown(names: tuple[str, ...]) -> str | list[str]:
    """A pass's reviewers as its proposal records them: a name, or the chain's list."""
    return names[0] if len(names) == 1 else list(names)


def _verdict_line(verdict: Verdict) -> str:
    """``confirm by model: notes``; a chain's steps in order (``confirm by secret-scan,
    then confirm by model: notes``)."""

    def one(step: Verdict) -> str:
        shown = f" ({step.problem})" if step.problem else (f": {step.notes}" if step.notes else "")
        return f"{step.verdict} by {step.reviewer}{shown}"

    return ", then ".join(one(step) for step in verdict.steps or (verdict,))


def _persona_source(pass_: Pass, text: str) -> dict[str, str]:
    """Which file judged: the persona's digest, and the theme it came from (empty: the
    pack's own), for the review record."""
    import hashlib

    from hippo_core.packs.files import locate
    from hippo_core.packs.manifest import read_manifest

    root = locate(pass_.roots, pass_.reviewer)
    theme = ""
    if root != pass_.root:
        manifest = read_manifest(root)
        theme = manifest.name if manifest else root.name
    return {
        "persona_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "persona_theme": theme,
    }
