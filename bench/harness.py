"""What the benches share: the floor, hippo as a user installs it, timing and the table.

- The floor: ``python -c pass`` run by a fresh, empty virtual environment's interpreter, made
  in the same run (`floor`). A base interpreter loads its own site-packages and a dev venv
  an editable install's import finder: neither is the least a Python program costs.
- hippo: the ``hippo`` console script of a venv where this checkout is ``pip install``-ed
  as a user installs it, not editable (`installed_hippo`). The venv is made once per list
  of dependencies and interpreter, and cached in ``$XDG_CACHE_HOME/hippo-bench`` (default
  ``~/.cache/hippo-bench``); each run reinstalls hippo itself into it from a clean copy of
  the checkout (pip byte-compiles what it installs).
- `measure` runs a command ``runs`` times and keeps, for each run, the child's CPU time
  (user + sys, from ``os.wait4``), its wall time and its peak RSS; `rounds` runs several
  cases (the floor among them) one after the other, round after round, so that the
  machine's drift in speed (large on a shared virtual machine) moves a case and its floor
  alike; `row` prints one aligned line per case: medians with their spread (min-max), the
  ratios of the medians to the floor's, and the target.

Only the standard library: the benches run under any interpreter of 3.11 or later.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What a copy of the checkout leaves out: a build must not see stale build/ or egg-info.
SKIP = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")
#: The variables the children keep from this process's environment; nothing else (no
#: PYTHONPATH, no HIPPO_*, no agent folders such as CLAUDE_CONFIG_DIR or XDG_DATA_HOME).
KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "PYTHONDONTWRITEBYTECODE")
READY = ".hippo-bench-ready"


# -- the interpreters --------------------------------------------------------------------


def floor(tmp: Path) -> Path:
    """The interpreter of a fresh, empty venv ``<tmp>/floor``: the baseline of every ratio."""
    folder = tmp / "floor"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hippo-bench"


def venv_key(extras: tuple[str, ...] = ()) -> str:
    """A hash of the dependency list (the ``extras`` asked for included) and of the
    interpreter the venv is made from."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    base = getattr(sys, "_base_executable", sys.executable)
    optional = project.get("optional-dependencies", {})
    data = {
        "dependencies": project.get("dependencies", []),
        "python": [sys.version, base],
        **({"extras": {name: optional.get(name, []) for name in extras}} if extras else {}),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Two benches started together must not install into one venv at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pip(venv: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_USER")}
    command = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:  # pip's warnings about the index are noise unless it fails
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def installed_hippo(extras: tuple[str, ...] = ()) -> Path:
    """The ``hippo`` script of the cached venv, with this checkout freshly installed in it
    (with ``extras``, such as ``postgres``)."""
    venv = cache_root() / f"venv-{venv_key(extras)}"
    with _locked(venv.with_name(venv.name + ".lock")), tempfile.TemporaryDirectory() as tmp:
        # pip builds in the source folder (build/, *.egg-info): build a copy, not the checkout.
        source = Path(tmp) / "src"
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIP))
        if (venv / READY).exists():
            say(f"reinstalling hippo from {ROOT} into {venv}")
            _pip(venv, "--no-deps", "--force-reinstall", str(source))
        else:
            say(f"making {venv} and installing hippo with its dependencies (about 20 s)")
            shutil.rmtree(venv, ignore_errors=True)  # a venv left half made
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            _pip(venv, f"{source}[{','.join(extras)}]" if extras else str(source))
            (venv / READY).write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import hippo_core; print(hippo_core.__file__)"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env=clean_env(),
    )
    if not where.stdout.startswith(str(venv)):
        found = where.stdout.strip() or where.stderr.strip()[-2000:]
        raise SystemExit(f"the installed venv does not import hippo from {venv}: {found}")
    return venv / "bin" / "hippo"


def clean_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """The children's environment: a few of this one's variables, and ``HOME`` and
    ``HIPPO_HOME`` in ``home`` (a temporary folder) so nothing of the user's is touched.
    ``HIPPO_LOAD_PLUGINS`` stays unset: hippo discovers its plugins as in real use."""
    env = {key: value for key, value in os.environ.items() if key in KEEP or key[:3] == "LC_"}
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(home)
        env["HIPPO_HOME"] = str(home / "hippo")
    return {**env, **extra}


#: What ``hippo review`` asks a person, and the code it shows.
PERSON_CODE = re.compile(rb"type the code ([A-Z0-9]{4}) and press Enter: ")


def as_a_person(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, float]:
    """Run ``argv`` on a pseudo-terminal and type back the code ``hippo review`` shows, as a
    person at her keyboard does (what only a person may approve lands): its exit code, what
    it printed (standard error included, lines ending in ``\\n``) and its CPU seconds."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    said, typed = b"", False
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed when the command ended
            break
        if not chunk:
            break
        said += chunk
        found = PERSON_CODE.search(said)
        if found and not typed:
            typed = True
            os.write(fd, found.group(1) + b"\n")
    _, status, usage = os.wait4(pid, 0)
    os.close(fd)
    text = said.decode("utf-8", "replace").replace("\r\n", "\n")
    return os.waitstatus_to_exitcode(status), text, usage.ru_utime + usage.ru_stime


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- measuring ---------------------------------------------------------------------------


@dataclass
class Sample:
    """One case: per run, the child's CPU seconds, wall seconds and peak RSS (KiB)."""

    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)

    def plus(self, other: Sample) -> Sample:
        """Two commands run one after the other, run by run."""
        return Sample(
            [a + b for a, b in zip(self.cpu, other.cpu, strict=True)],
            [a + b for a, b in zip(self.wall, other.wall, strict=True)],
            [max(a, b) for a, b in zip(self.rss, other.rss, strict=True)],
        )

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)


@dataclass
class Ran:
    """One child's run: its exit code, what it wrote, its CPU and wall seconds, peak RSS."""

    rc: int
    out: str
    err: str
    cpu: float
    wall: float
    rss: int


def spawn(
    argv: list[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> Ran:
    """Run ``argv`` once and measure it: its CPU time is the child's own (``os.wait4``).

    Stdin, stdout and stderr are files, not pipes: nothing in this process runs while the
    child does."""
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        if stdin is not None:
            given.write(stdin.encode())
            given.seek(0)
        start = time.perf_counter()
        child = subprocess.Popen(
            [str(part) for part in argv],
            cwd=cwd,
            env=env,
            stdin=given if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text, problem = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    rss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss  # to KiB
    cpu = usage.ru_utime + usage.ru_stime
    return Ran(os.waitstatus_to_exitcode(status), text, problem, cpu, wall, rss)


def run(
    argv: list[str | Path],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> tuple[float, float, int, str]:
    """Run ``argv`` once (:func:`spawn`): its CPU seconds, wall seconds, peak RSS (KiB) and
    stdout. Exits with the child's stderr when it fails."""
    ran = spawn(argv, cwd=cwd, env=env, stdin=stdin)
    if ran.rc != 0:
        command = " ".join(str(part) for part in argv)
        raise SystemExit(f"{command} exited with {ran.rc}:\n{ran.err.strip()[-2000:]}")
    return ran.cpu, ran.wall, ran.rss, ran.out


def measure(
    argv: list[str | Path],
    runs: int,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | Callable[[int], str] | None = None,
    before: Callable[[], object] | None = None,
    check: Callable[[str], str | None] | None = None,
) -> Sample:
    """Run ``argv`` ``runs`` times. ``stdin`` is a text or a function of the run's number;
    ``before`` runs before each run, untimed; ``check`` is given each run's stdout and
    returns what is wrong with it (the bench then stops) or None."""
    sample = Sample()
    for number in range(runs):
        if before is not None:
            before()
        text = stdin(number) if callable(stdin) else stdin
        cpu, wall, rss, out = run(argv, cwd=cwd, env=env, stdin=text)
        problem = check(out) if check is not None else None
        if problem:
            command = " ".join(str(part) for part in argv)
            raise SystemExit(f"{command}: {problem}\nits output began: {out[:400]!r}")
        sample.cpu.append(cpu)
        sample.wall.append(wall)
        sample.rss.append(rss)
    return sample


@dataclass
class Case:
    """A command to time, with what `measure` takes besides the number of runs."""

    argv: list[str | Path]
    cwd: Path | None = None
    env: dict[str, str] | None = None
    stdin: str | Callable[[int], str] | None = None
    before: Callable[[], object] | None = None
    check: Callable[[str], str | None] | None = None


def rounds(cases: dict[str, Case], runs: int) -> dict[str, Sample]:
    """Each case once per round, in the order given, for ``runs`` rounds."""
    found = {name: Sample() for name in cases}
    for number in range(runs):
        for name, case in cases.items():
            one = measure(
                case.argv,
                1,
                cwd=case.cwd,
                env=case.env,
                stdin=case.stdin(number) if callable(case.stdin) else case.stdin,
                before=case.before,
                check=case.check,
            )
            found[name].cpu += one.cpu
            found[name].wall += one.wall
            found[name].rss += one.rss
    return found


def prints_nothing(out: str) -> str | None:
    return f"printed {len(out)} characters, expected nothing" if out else None


def prints_something(out: str) -> str | None:
    return None if out.strip() else "printed nothing"


def starts_with(prefix: str) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        return None if out.startswith(prefix) else f"its output does not start with {prefix!r}"

    return check


# -- the table ---------------------------------------------------------------------------

NAME, TIME = 44, 27


def _time(values: list[float]) -> str:
    """Median (min-max), in ms below 10 s, else in s."""
    middle = statistics.median(values)
    scale, unit, digits = (1000, "ms", 1) if middle < 10 else (1, "s", 2)
    low, high = min(values) * scale, max(values) * scale
    if len(values) == 1:
        return f"{middle * scale:.{digits}f} {unit}"
    return f"{middle * scale:.{digits}f} ({low:.{digits}f}–{high:.{digits}f}) {unit}"


def _target(ratios: tuple[float, float], target: float | None) -> str:
    if target is None:
        return ""
    verdict = "ok" if max(ratios) <= target else "OVER"
    return f"<= {target:g}x {verdict}"


def header(title: str, runs: int) -> None:
    print(f"\n{title} (medians of {runs} runs unless said; spread min-max)")
    print(
        f"{'case':<{NAME}} {'cpu (user+sys)':>{TIME}} {'wall':>{TIME}} "
        f"{'cpu x':>8} {'wall x':>8}  target"
    )


def row(name: str, sample: Sample, base: Sample, target: float | None = None) -> None:
    """One case: its times, and its medians over ``base``'s (the floor's)."""
    ratios = (sample.cpu_median / base.cpu_median, sample.wall_median / base.wall_median)
    print(
        f"{name:<{NAME}} {_time(sample.cpu):>{TIME}} {_time(sample.wall):>{TIME}} "
        f"{ratios[0]:7.2f}x {ratios[1]:7.2f}x  {_target(ratios, target)}".rstrip()
    )


def ratio_row(name: str, sample: Sample, base: Sample, target: float | None = None) -> None:
    """A ratio of two cases' medians, such as 20,000 notes over 2,000: no times."""
    ratios = (sample.cpu_median / base.cpu_median, sample.wall_median / base.wall_median)
    print(
        f"{name:<{NAME}} {'':>{TIME}} {'':>{TIME}} "
        f"{ratios[0]:7.2f}x {ratios[1]:7.2f}x  {_target(ratios, target)}".rstrip()
    )


# -- workspaces --------------------------------------------------------------------------

WORDS = [
    "deploy",
    "migration",
    "database",
    "refunds",
    "ledger",
    "cache",
    "queue",
    "worker",
    "retry",
    "timeout",
    "lock",
    "index",
    "schema",
    "token",
    "password",
    "rotate",
    "backup",
    "restore",
    "latency",
    "alert",
    "incident",
    "runbook",
    "policy",
    "decision",
    "release",
    "build",
    "test",
    "flaky",
    "pipeline",
    "config",
    "secret",
    "metrics",
    "tracing",
    "storage",
]


def make_workspace(root: Path, count: int, seed: int = 7, relevance: str = "headings") -> None:
    """A workspace of ``count`` notes in 40 folders, with frontmatter, headings and links,
    ranking relevant notes by ``relevance``; every note is dated a minute back (older than
    the cache's racy window, as real notes are)."""
    rng = random.Random(seed)
    (root / ".hippo").mkdir(parents=True)
    settings = f'required_notes = ["Policies/Rules.md"]\nrelevance = "{relevance}"\n'
    (root / ".hippo" / "settings.toml").write_text(settings)
    notes = root / "notes"
    names = [f"Topic {i:04d} {rng.choice(WORDS)} {rng.choice(WORDS)}" for i in range(count)]
    (notes / "Policies").mkdir(parents=True)
    (notes / "Policies" / "Rules.md").write_text("# Rules\n\nBe careful.\n")
    (notes / "Home.md").write_text("# Home\n\nThe team's notes. Start at [[Rules]].\n\n## Index\n")
    for i, name in enumerate(names):
        folder = notes / f"area-{i % 40:02d}"
        folder.mkdir(exist_ok=True)
        links = " ".join(f"[[{rng.choice(names)}]]" for _ in range(3))
        body = "\n\n".join(
            f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)}\n\n"
            + " ".join(rng.choice(WORDS) for _ in range(60))
            for _ in range(4)
        )
        (folder / f"{name}.md").write_text(
            "---\ntype: topic\nstatus: current\n"
            f"updated: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}\n"
            f'review_after: 2027-0{rng.randint(1, 9)}-01\nsources: ["src/{i}.py"]\n---\n'
            f"# {name}\n\nWhat we know about {name.lower()}.\n\n{body}\n\nSee {links}.\n"
        )
    age_notes(root)


def age_notes(root: Path) -> None:
    """Date every note a minute back, as notes last edited a while ago are."""
    past = time.time() - 60
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))


def make_sessions(hippo: Path, root: Path, env: dict[str, str], count: int, seed: int = 11) -> None:
    """``count`` Claude Code sessions of the workspace at ``root`` in the home of ``env``
    (``~/.claude``), each a prompt of eight of :data:`WORDS` that reads one to three of the
    notes, days apart; then ``hippo ingest`` indexes them (untimed)."""
    sys.path.insert(0, str(ROOT))
    from datetime import UTC, datetime, timedelta

    from tests.claude_factory import ClaudeSession

    if not count:
        return
    rng = random.Random(seed)
    notes = sorted(str(path) for path in (root / "notes").rglob("*.md"))
    home = Path(env["HOME"]) / ".claude"
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for number in range(count):
        session = ClaudeSession(home, str(root), start=start + timedelta(hours=number))
        session.prompt(" ".join(rng.choice(WORDS) for _ in range(8)))
        for path in rng.sample(notes, rng.randint(1, 3)):
            session.tool("Read", file_path=path)
        session.answer("done").write()
    run([hippo, "ingest"], cwd=root, env=env)


@contextlib.contextmanager
def watching(hippo: Path, root: Path, env: dict[str, str], on: bool = True) -> Iterator[None]:
    """``hippo notes watch`` running in the workspace at ``root`` (when ``on``), answering
    the hooks before the first timed run; stopped at the end."""
    if not on:
        yield
        return
    child = subprocess.Popen(
        [str(hippo), "notes", "watch"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("watching "):
            raise SystemExit(f"hippo notes watch did not start: {line}{child.stderr.read()}")
        time.sleep(1.0)  # its first scan, then its socket
        yield
    finally:
        child.terminate()
        child.communicate(timeout=30)
