"""The dream report: ``.hippo/reports/<date>-dream.md``.

Line 1 is ``status: ok`` or ``status: failed``; a failed run has ``error: <text>`` on
line 2. Then one ``warning: <text>`` line for each pack that did not run (left out, or
recorded in the lock file and not here) or ran not as the lock file says: the other packs
ran, and a pack of the workspace's own that did not run is the failed run's error. Then
the sections, in this order: Window, Inputs, Omissions, Proposals, Validation failures,
Verdicts, Applied.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.terminal import printable
from hippo_core.dream.state import DRY_RUN_LINE, next_report, show_time
from hippo_core.files.atomic import atomic_write

if TYPE_CHECKING:
    from hippo_core.packs.running import Loaded
    from hippo_core.workspace.folder import Workspace

SECTIONS = (
    "Window",
    "Inputs",
    "Omissions",
    "Proposals",
    "Validation failures",
    "Verdicts",
    "Applied",
)
#: Phases whose time the report's Inputs sum up (the dream's own overhead, and the model).
PHASES = ("search", "rendering", "validation", "writing", "model")


@dataclass
class Replies:
    read: int = 0
    unreadable: int = 0
    first: str = ""
    """The start of the first reply that could not be read, quoted."""


@dataclass
class Report:
    """Lines gathered during a run, section by section."""

    started: datetime
    dry_run: bool
    status: str = "ok"
    error: str = ""
    lines: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in SECTIONS})
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    counts: Counter[str] = field(default_factory=Counter)
    replies: dict[tuple[str, str], Replies] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Each a ``warning:`` line at the head of the report."""
    keep_prompts: bool = False
    prompts: list[tuple[str, str]] = field(default_factory=list)
    """With ``keep_prompts`` (a dry run's ``--show-prompts``), each prompt built, by where
    it would have gone."""
    """Model replies by ``(pass, role)``: how many could be read, how many not."""

    def reply(self, pass_key: str, role: str, text: str, problem: str) -> None:
        """Count one reply of the ``proposer`` or the ``reviewer``; ``problem`` is why it
        could not be read ("" when it was)."""
        tally = self.replies.setdefault((pass_key, role), Replies())
        if not problem:
            tally.read += 1
            return
        tally.unreadable += 1
        if not tally.first:
            line = " ".join(text.split()) or "(empty)"
            tally.first = repr(line if len(line) <= 60 else line[:57] + "...")

    def packs(self, loaded: Loaded, *, whole: bool = True) -> None:
        """Say which packs are off here and which did not run, and why.

        The others run all the same. A pack of the workspace's own (a folder here, or one
        the lock file records: the team counts on it) that did not run fails the run, so
        its status says so; one a distribution brings that the workspace never asked for
        is a warning, as every one is when not ``whole`` (a run of some passes only).
        """
        if loaded.off:
            self.add("Window", "off here (disabled_packs): " + ", ".join(sorted(loaded.off)))
        ours = [i for i in loaded.left_out if whole and (i.locked or i.source == "workspace")]
        if ours:
            more = len(ours) - 1
            self.fail(ours[0].line() + (f" (and {more} more: see the warnings)" if more else ""))
            self.add("Window", ours[0].line())
        for item in loaded.left_out:
            if not ours or item is not ours[0]:
                self.warn(item.line())
        for line in loaded.warnings:
            self.warn(line)

    def warn(self, line: str) -> None:
        """A ``warning:`` line at the head of the report, and the same under Window."""
        line = " ".join(line.split())
        self.warnings.append(line)
        self.add("Window", line)

    def add(self, section: str, line: str) -> None:
        """One item of ``section``, on one line and printable whatever a model's text put in
        it: a NUL or an escape shows as its picture, a line break as ␤, so no reply can
        add lines (or sections) of its own to the report."""
        self.lines[section].append(f"- {printable(line).replace(chr(10), '␤')}")

    def fail(self, error: str) -> None:
        if self.status == "failed" and self.error:
            self.warnings.append(self.error)  # what failed it first stays said
        self.status, self.error = "failed", " ".join(error.split())

    def render(self) -> str:
        head = [f"status: {self.status}"]
        if self.status == "failed":
            head.append(f"error: {self.error}")
        head += [f"warning: {line}" for line in self.warnings]
        head += ["", f"# Dream report, {show_time(self.started)}"]
        body = []
        for section in SECTIONS:
            lines = list(self.lines[section])
            if section == "Window" and self.dry_run:
                lines.insert(0, DRY_RUN_LINE)
            if section == "Inputs":
                lines += [
                    f"- replies of {key}, {role}: {tally.read} read, {tally.unreadable} unreadable"
                    for (key, role), tally in sorted(self.replies.items())
                ]
            if section == "Inputs" and self.seconds:
                lines.append(
                    "- time: "
                    + ", ".join(f"{phase} {self.seconds[phase]:.2f} s" for phase in PHASES)
                )
            body += ["", f"## {section}", "", *(lines or ["- none"])]
        return "\n".join(head + body) + "\n"

    def write(self, workspace: Workspace) -> Path:
        path = next_report(workspace, self.started.strftime("%Y-%m-%d"))
        atomic_write(path, self.render())
        return path
