"""``hippo eval pack sleep``: the sleep pack's eval cases, one sleep each.

A case is ``eval/<case>/case.toml`` (and, when it needs cores to attach to, ``notes/``)::

    description = "three fragments on one topic become one core"

    [brief]                       # optional: the steer (summary, promote, noise)
    summary = "deploys mattered"
    promote = ["deploy"]

    [[fragment]]                  # the short-term fragments, in order
    content = "Deploys run from main after CI passes"
    topic = "deploy"              # optional
    verbatim = false              # optional

    [[expect]]                    # the operations a good sleep drafts
    kind = "new_core"             # new_core | attach | supersede | verbatim
    core = "deploys-run-from-main"  # attach and supersede: the core it names (optional)
    contains = ["main"]           # words its text must hold, case-insensitive

The case runs in a temporary workspace with this workspace's ``[sleep.model]`` (none:
mechanical mode), sleeps once on its brief, and approves every operation drafted, as a
reviewer who trusts the drafter would. The counts mean what a dream's mean: ``proposals``
the operations drafted, ``invalid`` those the checks dropped, ``applied`` those that landed,
``matched`` the landed ones an ``[[expect]]`` describes (each used once). ``--record`` and
``--replay`` keep the model's answers in ``recorded.json`` as for any pack.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hippo_core import CaseError, CaseResult, HippoError

if TYPE_CHECKING:
    from hippo_core import Plugins, Workspace


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class BriefCase(_Strict):
    summary: str = Field(min_length=1)
    promote: list[str] = Field(default_factory=list)
    noise: list[str] = Field(default_factory=list)


class FragmentCase(_Strict):
    content: str = Field(min_length=1)
    topic: str = ""
    verbatim: bool = False


class ExpectCase(_Strict):
    kind: Literal["new_core", "attach", "supersede", "verbatim"]
    core: str = ""
    contains: list[str] = Field(default_factory=list)


#: The day every case's fragments are dated (2026-11-30): the prompts, and so the recorded
#: answers, are the same whatever day a case runs.
CASE_DAY = 1796029200.0


class SleepCase(_Strict):
    description: str = Field(min_length=1)
    brief: BriefCase | None = None
    fragment: list[FragmentCase] = Field(min_length=1)
    expect: list[ExpectCase] = Field(default_factory=list)


def load(folder: Path) -> SleepCase:
    shown = f"eval/{folder.name}/case.toml"
    try:
        values = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseError([f"{shown}: missing"]) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CaseError([f"{shown}: not readable TOML ({exc})"]) from None
    try:
        return SleepCase.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"])
            problems.append(f"{shown}: {where}: {error['msg']}")
        raise CaseError(problems) from None


class SleepEval:
    """The runner ``hippo_register_eval_runners`` registers for the sleep pack."""

    def run_case(
        self,
        folder: Path,
        *,
        pack: str,
        pack_root: Path,
        mode: str,
        workspace: Workspace | None,
        plugins: Plugins,
    ) -> CaseResult:
        from hippo_core import case_folder

        case = load(folder)
        with case_folder() as temp:
            try:
                return _run(case, folder, pack_root, mode, workspace, plugins, temp / "workspace")
            except HippoError as exc:
                return CaseResult(folder.name, "failed", " ".join(str(exc).split()))


def _settings(workspace: Workspace | None, plugins: Plugins) -> str:
    """This workspace's drafting model, as the case's settings."""
    import json

    if workspace is None or "sleep" not in workspace.settings.tables:
        return ""
    from hippo_packs.sleep.config import load as load_settings

    model = load_settings(workspace, plugins)[0].model
    lines = ["[sleep.model]"]
    for key, value in model.model_dump().items():
        lines.append(f"{key} = {_toml(value) if isinstance(value, dict) else json.dumps(value)}")
    return "\n".join(lines) + "\n"


def _toml(table: dict[str, Any]) -> str:
    import tomlkit

    inline = tomlkit.inline_table()
    inline.update(table)
    return inline.as_string()


def _run(
    case: SleepCase,
    folder: Path,
    pack_root: Path,
    mode: str,
    workspace: Workspace | None,
    plugins: Plugins,
    root: Path,
) -> CaseResult:
    from hippo_core import Metered, Recording, Replay, Workspace, atomic_write, read_recording
    from hippo_packs.sleep.cycle import Cycle, landing, tick
    from hippo_packs.sleep.cycle.landing import locked
    from hippo_packs.sleep.model.lifecycle import backend_for
    from hippo_packs.sleep.records import store

    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text(_settings(workspace, plugins), encoding="utf-8")
    shutil.copytree(
        pack_root,
        root / ".hippo" / "packs" / "sleep",
        ignore=lambda where, names: ["eval"] if Path(where) == pack_root else [],
    )
    notes = folder / "notes"
    if notes.is_dir():
        shutil.copytree(notes, root / "notes")
    else:
        (root / "notes").mkdir()
    here = Workspace.open(root)
    cycle = Cycle.open(here, plugins)
    shown = f"eval/{folder.name}/recorded.json"
    recording = None
    if not cycle.mechanical or mode == "replay":
        if mode == "replay":
            cycle.model = Metered(
                Replay(read_recording(folder / "recorded.json", shown), root, shown, [])
            )
        elif mode == "record":
            recording = Recording(backend_for(cycle), root)
            cycle.model = Metered(recording)
        else:
            cycle.model = Metered(backend_for(cycle))
    for fragment in case.fragment:
        store.add_fragment(
            here,
            fragment.content,
            topic=fragment.topic,
            verbatim=fragment.verbatim,
            created=CASE_DAY,
        )
    brief = None
    if case.brief is not None:
        brief = store.add_brief(
            here,
            case.brief.summary,
            promote=case.brief.promote,
            noise=case.brief.noise,
            completed=[],
        )
    with locked(cycle, what="the eval"):
        state = store.state(here)
        slept = tick.sleep_on(cycle, state, brief)
    result = CaseResult(folder.name)
    model = cycle.model
    if isinstance(model, Metered):
        result.calls, result.bytes_in = model.calls, model.bytes_in
        result.bytes_out, result.seconds = model.bytes_out, model.seconds
    if slept["outcome"] == "failed":
        result.status, result.error = "failed", str(slept.get("error"))
        return result
    result.invalid = len(slept.get("dropped") or [])
    result.expected = len(case.expect)
    if slept.get("draft"):
        draft = store.load_draft(here, slept["draft"])
        result.proposals = len(draft["operations"])
        decisions = [
            {"op": op["index"], "verdict": "approve", "restate": True} for op in draft["operations"]
        ]
        with locked(cycle, what="the eval"):
            eval_run = {"way": "eval", "person": False, "tool": "hippo eval pack sleep"}
            landing.decide(
                cycle,
                draft["id"],
                decisions,
                "eval: every operation approved",
                by=eval_run,
                measuring=True,
            )
        landed = [
            op
            for op in store.load_draft(here, draft["id"])["operations"]
            if op.get("status") == "approved"
        ]
        result.applied = len(landed)
        result.not_applied = result.proposals - result.applied
        result.matched = _matching(landed, case.expect)
    if recording is not None:
        atomic_write(folder / "recorded.json", recording.recording())
    return result


def _matching(landed: list[dict[str, Any]], expect: list[ExpectCase]) -> int:
    """How many landed operations an expectation describes, each expectation used once."""
    left = list(expect)
    matched = 0
    for op in landed:
        plan = op.get("landing") or {}
        kind = plan.get("kind") or op.get("kind")
        text = str(plan.get("content") or op.get("content") or "").lower()
        target = str(op.get("target_core_id") or "")
        for wanted in left:
            if wanted.kind != kind or (wanted.core and wanted.core != target):
                continue
            if all(word.lower() in text for word in wanted.contains):
                left.remove(wanted)
                matched += 1
                break
    return matched
