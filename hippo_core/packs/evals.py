"""``hippo eval pack``: run a pack's eval cases through the real dream and measure them.

Each case runs in a temporary folder holding a workspace (the current workspace's model
settings, the pack without its ``eval/`` folder, the case's notes), its own ``HIPPO_HOME``
and the case's transcripts, so a case reads nothing of the user's. The dream covers
exactly the case's turns; what it did is read from its events and from the proposals,
reviews and receipts it wrote. docs/eval.md defines the metrics.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.files.home import user_path
from hippo_core.packs.evals_case import WORKSPACE, Case, CaseError, case_names, load_case
from hippo_core.packs.evals_result import CaseResult, EvalResult, Mode, score
from hippo_core.plugins.manager import hookimpl

if TYPE_CHECKING:
    from hippo_core.dream.model import Pass
    from hippo_core.packs.evals_replay import Metered, Recording
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


def run_eval(
    spec: str,
    *,
    cases: list[str] | None = None,
    mode: Mode = "live",
    progress: Callable[[CaseResult], None] = lambda result: None,
) -> EvalResult:
    """Run the eval cases of the pack ``spec`` (a pack folder, or a pack's name here).

    Raises :class:`UsageError` for an unknown pack or case, :class:`CaseError` when a
    case cannot run as written, :class:`HippoError` for a pack without cases. A case
    that fails (the model, a replay miss, the dream) is a failed :class:`CaseResult`.
    """
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.workspace.folder import Workspace, find_root

    here = find_root(Path.cwd())
    workspace = Workspace.open(here) if here is not None else None
    plugins = load_plugins()
    name, root = resolve_pack(spec, workspace, plugins)
    names = case_names(root)
    if not names:
        raise HippoError(f"{spec} has no eval cases (eval/<case>/case.toml)")
    for wanted in cases or []:
        if wanted not in names:
            raise UsageError(f"{spec} has no case '{wanted}'; its cases are: {', '.join(names)}")
    chosen = [n for n in names if not cases or n in cases]
    runner = plugins.eval_runners().get(name)
    if runner is not None:  # a pack whose cases a plugin runs (the sleep pack's)
        result = EvalResult(name, root, mode)
        for case_name in chosen:
            outcome = runner.run_case(
                root / "eval" / case_name,
                pack=name,
                pack_root=root,
                mode=mode,
                workspace=workspace,
                plugins=plugins,
            )
            result.cases.append(outcome)
            progress(outcome)
        return result
    loaded, problems = [], []
    kinds, sources = plugins.kinds(), plugins.sources()
    for case_name in chosen:
        try:
            loaded.append(load_case(root, case_name, kinds=kinds, sources=sources))
        except CaseError as error:
            problems += error.problems
    if problems:
        raise CaseError(problems)
    settings = model_settings(workspace)
    result = EvalResult(name, root, mode)
    for case in loaded:
        outcome = run_case(case, name, root, settings, mode, plugins)
        result.cases.append(outcome)
        progress(outcome)
    return result


def resolve_pack(spec: str, workspace: Workspace | None, plugins: Plugins) -> tuple[str, Path]:
    """The name and folder of the pack ``spec``: a folder holding ``passes/``, else the
    name of a pack that runs in ``workspace``."""
    folder = user_path(spec)
    if folder.is_dir() and not (folder / "passes").is_dir():
        from hippo_core.packs.scaffold import pack_folder

        with contextlib.suppress(HippoError):  # the distribution `hippo pack new` wrote
            folder = pack_folder(folder)
    if (folder / "passes").is_dir():
        root = folder.resolve()
        return _declared_name(root), root
    if workspace is None:
        if folder.is_dir():
            raise HippoError(f"{spec}: not a pack (it has no passes/ folder); give a pack folder")
        raise UsageError(
            f"no pack folder {spec}, and no workspace here (.hippo/ in this folder or above) "
            "whose packs could have that name; give a pack folder"
        )
    from hippo_core.packs.running import load_here

    loaded = load_here(workspace, plugins)
    packs = loaded.packs
    for pack in packs:
        if pack.name == spec:
            return pack.name, pack.root
    for item in loaded.left_out:
        if item.name == spec:
            raise HippoError(item.line())
    if folder.is_dir():
        raise HippoError(f"{spec}: not a pack (it has no passes/ folder); give a pack folder")
    known = ", ".join(pack.name for pack in packs) or "none"
    raise UsageError(f"no pack named '{spec}' here; the packs here are: {known}")


def _declared_name(root: Path) -> str:
    """``name`` in the pack's ``pack.toml``; else the folder's name (the pack loader, not
    eval, reports a bad ``pack.toml``)."""
    from hippo_core.packs.files import PackError
    from hippo_core.packs.manifest import read_manifest

    try:
        manifest = read_manifest(root)
    except PackError:
        return root.name
    return manifest.name if manifest else root.name


def model_settings(workspace: Workspace | None) -> str:
    """The model settings of ``workspace`` as a settings file; empty without a workspace.

    A program given relative to the workspace (``./.hippo/model.sh``) is made absolute,
    since the case runs in another folder.
    """
    if workspace is None:
        return ""
    settings = workspace.settings
    argv = list(settings.model_command)
    if argv:
        program = user_path(argv[0])
        if not program.is_absolute() and len(program.parts) > 1:
            argv[0] = str(workspace.root / program)
    openai = settings.openai
    lines = [
        f"model_backend = {json.dumps(settings.model_backend)}",
        f"model_command = {json.dumps(argv)}",
        f"model_timeout_seconds = {float(settings.model_timeout_seconds)!r}",
        "",
        "[openai]",
        f"url = {json.dumps(openai.url)}",
        f"model = {json.dumps(openai.model)}",
        f"api_key_env = {json.dumps(openai.api_key_env)}",
        f"max_tokens = {int(openai.max_tokens)}",
    ]
    return "\n".join(lines) + "\n"


def run_case(
    case: Case, pack: str, pack_root: Path, settings: str, mode: Mode, plugins: Plugins
) -> CaseResult:
    """Run one case in a temporary folder with its own ``HIPPO_HOME``; remove it after."""
    with case_folder() as temp:
        try:
            return _run(case, pack, pack_root, settings, mode, plugins, temp)
        except UsageError:
            raise
        except HippoError as exc:
            return CaseResult(case.name, "failed", " ".join(str(exc).split()))
        except OSError as exc:  # a case file that cannot be read or copied
            return CaseResult(case.name, "failed", f"{exc.filename}: {exc.strerror or exc}")


@contextlib.contextmanager
def case_folder() -> Iterator[Path]:
    """A temporary folder for one case, with its own ``HIPPO_HOME`` (``<folder>/home``)
    for as long as the case runs; both gone after."""
    temp = Path(tempfile.mkdtemp(prefix="hippo-eval-")).resolve()
    saved = os.environ.get("HIPPO_HOME")
    os.environ["HIPPO_HOME"] = str(temp / "home")
    try:
        yield temp
    finally:
        if saved is None:
            os.environ.pop("HIPPO_HOME", None)
        else:
            os.environ["HIPPO_HOME"] = saved
        shutil.rmtree(temp, ignore_errors=True)


def _run(
    case: Case,
    pack: str,
    pack_root: Path,
    settings: str,
    mode: Mode,
    plugins: Plugins,
    temp: Path,
) -> CaseResult:
    from hippo_core.dream.run import Options, dream
    from hippo_core.files.atomic import atomic_write
    from hippo_core.files.home import index_path
    from hippo_core.index.derived import write_derived
    from hippo_core.index.ingest import ingest
    from hippo_core.packs.running import load_here
    from hippo_core.workspace.folder import Workspace

    root = temp / "workspace"
    _build(root, case, pack, pack_root, settings)
    folders = _transcripts(case, temp / "transcripts", root)
    workspace = Workspace.open(root)
    summary = ingest(extra_dirs=folders, defaults=False)
    write_derived(index_path(), workspace)
    since, until, sessions = _window(case, workspace)
    loaded = load_here(workspace, plugins)
    for item in loaded.left_out:
        if item.name == pack:  # the pack under test: its cases cannot run without it
            raise HippoError(item.line())
    passes = [
        p
        for p in loaded.passes()
        if p.pack == pack and (case.passes is None or p.name in case.passes)
    ]
    model, recording = _model(mode, case, workspace, plugins, passes)
    listener = _Listener(root)
    pm = plugins.pm
    assert pm is not None, "an eval loads its plugins with pluggy (load_plugins())"
    pm.register(listener, name=f"hippo-eval-{id(listener)}")
    try:
        options = Options(
            since=since,
            until=until,
            backend=model,
            transcripts=folders,
            passes=frozenset(p.key for p in passes),
        )
        outcome = dream(workspace, options, say=lambda line: None)
    finally:
        pm.unregister(listener)
    result = CaseResult(case.name, transcripts=summary.files, sessions=sessions)
    result.calls, result.bytes_in = model.calls, model.bytes_in
    result.bytes_out, result.seconds = model.bytes_out, model.seconds
    if outcome.status != "ok":
        result.status, result.error = "failed", outcome.error
        return result
    score(result, case, workspace, listener.events)
    if recording is not None:
        atomic_write(case.recorded, recording.recording())
    return result


def _build(root: Path, case: Case, pack: str, pack_root: Path, settings: str) -> None:
    """The case's workspace: settings, the pack (without ``eval/``) and the notes."""

    def skip(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n in ("eval", ".git")] if Path(folder) == pack_root else []

    (root / ".hippo").mkdir(parents=True)
    (root / ".hippo" / "settings.toml").write_text(settings, encoding="utf-8")
    shutil.copytree(pack_root, root / ".hippo" / "packs" / pack, ignore=skip, symlinks=True)
    shutil.copytree(case.notes, root / "notes", symlinks=True)
    # The copy runs even where a distribution installed here registers the same pack.
    from hippo_core.packs.lock import Locked, update_lock
    from hippo_core.workspace.folder import Workspace

    workspace = Workspace.open(root)
    update_lock(workspace, Locked(pack, "", "vendored", f"eval of {pack_root}"))


def _transcripts(case: Case, dest: Path, root: Path) -> dict[str, tuple[str, ...]]:
    """Copy the case's transcripts with ``{{workspace}}`` replaced; the folder per tool."""
    escaped = json.dumps(str(root))[1:-1].encode("utf-8")
    folders: dict[str, tuple[str, ...]] = {}
    if not case.transcripts.is_dir():
        return folders
    for tool in sorted(case.transcripts.iterdir()):
        if tool.name.startswith("."):
            continue
        for folder, _dirs, files in os.walk(tool):
            for name in files:
                source = Path(folder) / name
                target = dest / source.relative_to(case.transcripts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes().replace(WORKSPACE.encode(), escaped))
        folders[tool.name] = (str(dest / tool.name),)
    return folders


def _window(case: Case, workspace: Workspace) -> tuple[datetime, datetime, int]:
    """From the first to one second past the last moment of the workspace's sessions."""
    from hippo_core.agents.sessions import session_records
    from hippo_core.dream.state import parse_time
    from hippo_core.dream.turns import TurnIndex
    from hippo_core.files.home import index_path

    records = session_records(workspace)
    index = TurnIndex.open(index_path())
    spans = index.sessions(r["id"] for r in records) if index is not None else {}
    if index is not None:
        index.close()
    moments = []
    for record in records:
        first, last, _ordinals = spans.get(record["id"], (None, None, []))
        found = (record.get("started"), record.get("ended"), first, last)
        moments += [moment for value in found if (moment := parse_time(value))]
    if not moments:
        raise HippoError(
            f"{case.label}/transcripts: no session of the case belongs to its workspace; "
            f"write {WORKSPACE} as the cwd of each transcript"
        )
    return min(moments), max(moments) + timedelta(seconds=1), len(records)


def _model(
    mode: Mode, case: Case, workspace: Workspace, plugins: Plugins, passes: list[Pass]
) -> tuple[Metered, Recording | None]:
    from hippo_core.packs.evals_replay import (
        Metered,
        Recording,
        Replay,
        configured,
        read_recording,
    )

    shown = f"{case.label}/recorded.json"
    if mode == "replay":
        calls = read_recording(case.recorded, shown)
        return Metered(Replay(calls, workspace.root, shown, passes)), None
    if mode == "record":
        recording = Recording(configured(workspace, plugins), workspace.root)
        return Metered(recording), recording
    return Metered(configured(workspace, plugins)), None


class _Listener:
    """Hears the dream's events for one case's workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.events: list[Event] = []

    @hookimpl
    def hippo_event(self, workspace: Workspace, event: Event) -> None:
        if workspace.root == self.root:
            self.events.append(event)


def replay_cases(root: Path, name: str, shown: str) -> EvalResult:
    """The pack's eval cases run again from their recordings (``hippo eval pack --replay``).

    The cases are in name order. A case with no ``recorded.json`` fails, saying how to
    record it (``shown``: the pack's folder as the user would type it). Raises
    :class:`HippoError` for a pack with no cases.
    """
    names = case_names(root)
    if not names:
        raise HippoError(f"{shown} has no eval cases (eval/<case>/case.toml) to replay")
    recorded = [n for n in names if (root / "eval" / n / "recorded.json").is_file()]
    done: dict[str, CaseResult] = {}
    if recorded:
        ran = run_eval(os.fspath(root), cases=recorded, mode="replay")
        done = {case.name: case for case in ran.cases}
    result = EvalResult(name, root, "replay")
    for case_name in names:
        case = done.get(case_name)
        if case is None:
            record = f"hippo eval pack {shown} --record"
            problem = f"eval/{case_name} has no recorded.json; run {record} first"
            case = CaseResult(case_name, "failed", problem)
        result.cases.append(case)
    return result
