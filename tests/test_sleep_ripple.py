"""The ripple: waking the main model with a real command (run as another account when hippo
runs as root) or a POST to a real endpoint on 127.0.0.1, one at a time per event."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hippo_packs.sleep.config import SleepRipple, SleepSettings
from hippo_packs.sleep.wake.ripple import NOBODY, NUDGE, message
from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import recorder
from tests.sleep_scene import Sleepy, make_sleepy
from tests.test_real_agents import claude_installed  # noqa: F401  (a fixture)
from tests.test_sleep_notify import receiver_check, webhook

ROOT = os.name == "posix" and os.geteuid() == 0


def test_every_default_message_says_nobody_is_there_and_asks_for_the_nudge() -> None:
    ripple = SleepRipple()
    for event, data in [
        ("brief_requested", {}),
        ("draft_submitted", {"draft": "d1"}),
        ("tend_resubmitted", {"draft": "d2", "attempt": 2}),
        ("tend_resubmitted", {"draft": "d3", "attempt": 3, "terminal": True}),
        ("brief_unmatched", {}),
    ]:
        said = message(ripple, event, data)
        assert said.startswith(NOBODY) and said.endswith(NUDGE), said
    assert '"restate": false' in message(ripple, "draft_submitted", {"draft": "d1"})
    assert "d1" in message(ripple, "draft_submitted", {"draft": "d1"})
    assert "last attempt" in message(ripple, "tend_resubmitted", {"terminal": True})
    own = SleepRipple(messages={"draft_submitted": "review {draft_id}, please"})
    assert message(own, "draft_submitted", {"draft": "d9"}) == "review d9, please"
    last = SleepRipple(messages={"tend_resubmitted_terminal": "last one: {draft_id}"})
    assert message(last, "tend_resubmitted", {"draft": "d4", "terminal": True}) == "last one: d4"


def test_a_type_that_is_no_ripple_is_refused() -> None:
    with pytest.raises(ValueError, match=r"ripple.type must be script, endpoint or empty, not 'x'"):
        SleepSettings.model_validate({"ripple": {"type": "x"}})
    for off in ("", "off", "none"):
        assert SleepSettings.model_validate({"ripple": {"type": off}}).ripple.type == ""


def ripple_settings(night: Sleepy, **ripple: Any) -> None:
    lines = ["", "[sleep.ripple]"] + [f"{k} = {json.dumps(v)}" for k, v in ripple.items()]
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def draft_now(night: Sleepy, topic: str = "deploy") -> str:
    for text in (f"{topic} runs from main", f"{topic} from main only", f"main is where {topic}s"):
        night.remember(text, topic)
    return str(night.json("sleep", "now", "--without-brief")["sleep"]["draft"])


def ripples(night: Sleepy) -> list[dict[str, Any]]:
    path = night.root / ".hippo" / "sleep" / "ripples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size:
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never came")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder the ripple's account may enter and write to (pytest's own are root's)."""
    folder = Path(tempfile.mkdtemp(prefix="hippo-ripple-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def account(shared: Path) -> dict[str, str]:
    """Where and as whom the script runs: as root, as nobody, in the shared folder."""
    return {"run_as": "nobody", "cwd": str(shared)} if ROOT else {"cwd": str(shared)}


def test_a_script_ripple_runs_the_command_with_the_message(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, shared: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    out = shared / "woken.txt"
    script = 'printf "%s|%s|%s" "$HIPPO_RIPPLE_EVENT" "$1" "$2" > "$3"'
    command = ["sh", "-c", script, "ripple", "{event}", "{message}", str(out)]
    ripple_settings(night, type="script", command=command, **account(shared))
    draft = draft_now(night)
    event, said_event, said = wait_for_file(out).split("|", 2)
    assert event == said_event == "draft_submitted"
    assert said.startswith(NOBODY) and draft in said
    [started] = [r for r in ripples(night) if r["event"] == "draft_submitted"]
    assert started["ripple"] == "started" and started["pid"] > 0


def test_the_message_on_stdin(make_workspace: WorkspaceMaker, hippo: HippoRunner, shared: Path):
    night = make_sleepy(make_workspace(), hippo)
    out = shared / "stdin.txt"
    command = ["sh", "-c", f'cat > "{out}"']
    settings = {"type": "script", "command": command, "stdin": True}
    ripple_settings(night, **settings, **account(shared))
    draft_now(night)
    said = wait_for_file(out)
    assert said.startswith(NOBODY) and said.endswith(NUDGE)


@pytest.mark.skipif(not ROOT, reason="only a service running as root needs run_as")
def test_as_root_a_script_without_run_as_is_refused(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, shared: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    ripple_settings(night, type="script", command=["touch", str(shared / "never")])
    draft_now(night)
    [refused] = ripples(night)
    assert refused["ripple"] == "refused" and "set run_as under [sleep.ripple]" in refused["error"]
    time.sleep(0.3)
    assert not (shared / "never").exists()


def test_one_ripple_at_a_time_per_event_the_next_fired_by_a_tick(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, shared: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    marks = shared / "marks"
    command = ["sh", "-c", f'echo "$1" >> "{marks}"; sleep 1.5', "ripple", "{draft_id}"]
    ripple_settings(night, type="script", command=command, **account(shared))
    first = draft_now(night, "deploy")
    second = _second_draft(night)
    kinds = [r["ripple"] for r in ripples(night) if r["event"] == "draft_submitted"]
    assert kinds == ["started", "waiting"], ripples(night)
    from hippo_core.files.processes import process_alive

    [started] = [r for r in ripples(night) if r["ripple"] == "started"]
    deadline = time.monotonic() + 30
    while process_alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)  # the first ripple ends by itself
    night.ok("sleep", "tick")
    assert wait_for_lines(marks, 2) == [first, second], ripples(night)


def _second_draft(night: Sleepy) -> str:
    """A second draft while the first ripple runs: the first draft's chain closed by hand."""
    from hippo_packs.sleep.records import store

    draft = night.draft()
    draft["status"] = "closed"
    store.save_draft(_workspace(night), draft)
    return draft_now(night, "billing")


def _workspace(night: Sleepy) -> Any:
    from hippo_core.workspace.folder import Workspace

    return Workspace.open(night.root)


def wait_for_lines(path: Path, count: int) -> list[str]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = path.read_text().split() if path.exists() else []
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {count} lines")


def test_an_endpoint_ripple_posts_the_event_and_its_message(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    ripple_settings(night, type="endpoint", url=f"{url}ripple", bearer_token="rip")
    draft = draft_now(night)
    [posted] = [h for h in heard if h["body"]["event"] == "draft_submitted"]
    assert posted["auth"] == "Bearer rip" and posted["body"]["draft"] == draft
    assert posted["body"]["message"].startswith(NOBODY)
    [kept] = [r for r in ripples(night) if r["event"] == "draft_submitted"]
    assert (kept["ripple"], kept["status"]) == ("posted", 200)
    stop()


def test_an_endpoint_that_redirects_elsewhere_never_gives_the_bearer_away(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """W1: the endpoint answers 302 to another host: not followed, a failed ripple."""
    elsewhere, stolen, stop_elsewhere = recorder(monkeypatch, "127.0.0.2")
    url, heard, stop = recorder(monkeypatch, status=302, location=f"{elsewhere}elsewhere")
    night = make_sleepy(make_workspace(), hippo)
    monkeypatch.setenv("RIPPLE_BEARER", "ripple-bearer-SECRET-42")
    ripple_settings(night, type="endpoint", url=f"{url}ripple", bearer_token_env="RIPPLE_BEARER")
    draft_now(night)
    [kept] = [r for r in ripples(night) if r["event"] == "draft_submitted"]
    assert kept["ripple"] == "failed"
    assert kept["error"] == (
        f"the endpoint answered 302 to {elsewhere}elsewhere: hippo does not follow redirects"
    )
    assert heard.credentials() == ["Bearer ripple-bearer-SECRET-42"] and stolen == []
    stop()
    stop_elsewhere()


def test_an_endpoint_ripple_is_signed_as_the_webhook_is(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    verified = receiver_check()
    url, heard, stop = webhook(monkeypatch)
    night = make_sleepy(make_workspace(), hippo)
    monkeypatch.setenv("RIPPLE_SECRET", "ripple-signing-key")
    ripple_settings(night, type="endpoint", url=f"{url}ripple", secret_env="RIPPLE_SECRET")
    draft_now(night)
    [posted] = [h for h in heard if h["body"]["event"] == "draft_submitted"]
    assert verified("ripple-signing-key", posted["headers"], posted["raw"]) is True
    assert verified("another", posted["headers"], posted["raw"]) is False
    stop()


def test_ripple_claude_writes_the_command_with_the_folders_mcp_servers_allowed(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    project = tmp_path / "project"
    project.mkdir()
    home = Path(os.environ["HOME"])
    claude = {
        "mcpServers": {"everywhere": {"command": "x"}},
        "projects": {str(project): {"mcpServers": {"hippo": {"command": "hippo"}}}},
    }
    (home / ".claude.json").write_text(json.dumps(claude))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"notes": {"command": "y"}}}))
    (night.root / ".hippo" / "settings.toml").write_text(
        (night.root / ".hippo" / "settings.toml").read_text()
        + '\n# kept\n[sleep.ripple]\nrun_as = "ana"\n'
    )
    run = night.ok("sleep", "ripple-claude", str(project))
    assert "wrote [sleep.ripple] in .hippo/settings.toml: claude -p {message}" in run.out
    assert "warning" not in run.err
    written = tomllib.loads((night.root / ".hippo" / "settings.toml").read_text())
    settings = SleepSettings.model_validate(written["sleep"])
    assert settings.ripple.type == "script" and settings.ripple.cwd == str(project)
    assert settings.ripple.command == [
        "claude",
        "-p",
        "{message}",
        "--allowedTools",
        "mcp__everywhere,mcp__hippo,mcp__notes",
    ]
    assert settings.ripple.run_as == "ana"  # what was there stays
    assert "# kept" in (night.root / ".hippo" / "settings.toml").read_text()
    (home / ".claude.json").write_text("{}")
    run = night.ok("sleep", "ripple-claude", str(project))
    assert "no MCP server named hippo" in run.err
    assert night.run("sleep", "ripple-claude", str(tmp_path / "nowhere")).code == 1


def test_a_ripple_command_that_does_not_exist_is_recorded_and_the_sleep_goes_on(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, shared: Path
) -> None:
    night = make_sleepy(make_workspace(), hippo)
    command = ["no-such-ripple-program", "{message}"]
    ripple_settings(night, type="script", command=command, **account(shared))
    draft = draft_now(night)
    assert night.draft()["id"] == draft  # the draft is there whatever the ripple did
    [refused] = ripples(night)
    assert refused["ripple"] == "refused"
    assert refused["error"] == "[sleep.ripple] command: 'no-such-ripple-program' is not on PATH"


@pytest.mark.slow
@pytest.mark.usefixtures("claude_installed")
def test_the_ripple_wakes_the_real_claude_code_a_session_of_its_own_that_lands_the_draft(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    anthropic: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seren's loop with separation of duties (issue 37): a day session of Claude Code keeps
    fragments, writes the brief and nudges from its shell; the ripple starts ``claude -p``
    (the real program, its model scripted), a session of its own, which reviews through
    hippo's MCP tools and lands the draft the day session could not approve."""
    import subprocess
    import sys

    from hippo_core.files.processes import process_alive
    from tests.terminal import clean_env
    from tests.test_real_agents import CLAUDE

    home = Path(os.environ["HOME"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))  # where Claude Code keeps its state
    night = make_sleepy(make_workspace(), hippo)
    assert hippo("mcp", "install", "claude-code", "--user", cwd=night.root).code == 0
    command = [CLAUDE, "-p", "{message}", "--allowedTools", "mcp__hippo"]
    ripple_settings(
        night,
        type="script",
        command=command,
        events=["draft_submitted"],
        **({"run_as": "root"} if ROOT else {}),
    )
    with (night.root / ".hippo" / "settings.toml").open("a", encoding="utf-8") as handle:
        handle.write('[sleep.ripple.messages]\ndraft_submitted = "HIPPO-REVIEW {draft_id}"\n')
    model = {
        "ANTHROPIC_BASE_URL": anthropic.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CONFIG_DIR": str(home),
        # run_as resets HOME to the account's: Claude Code's cache stays in the test's.
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    day = clean_env(CLAUDECODE="1", CLAUDE_CODE_SESSION_ID="day-session", **model)

    def as_the_day_session(*args: str) -> str:
        run = subprocess.run(
            [sys.executable, "-m", "hippo_core", *args],
            cwd=night.root,
            env=day,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, (args, run.stdout, run.stderr)
        return run.stdout

    for text in ("deploy runs from main", "deploy from main only", "main is where we deploy"):
        as_the_day_session("remember", text, "--topic", "deploy")
    as_the_day_session("brief", "--summary", "deploys", "--promote", "deploy")
    as_the_day_session("nudge")
    draft = night.draft()
    refused = subprocess.run(
        [sys.executable, "-m", "hippo_core", "review", draft["id"], "--approve", "0"],
        cwd=night.root,
        env=day,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 1 and "the same session (day-session)" in refused.stderr

    [started] = [r for r in ripples(night) if r["event"] == "draft_submitted"]
    assert started["ripple"] == "started", started
    deadline = time.monotonic() + 300
    while process_alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    reviewed = night.draft()
    assert [op["status"] for op in reviewed["operations"]] == ["approved"] * len(
        reviewed["operations"]
    ), (reviewed, anthropic.requests[-1:])
    by = reviewed["operations"][0]["decided_by"]
    assert (by["way"], by["agent"], by["person"]) == ("mcp", "claude-code", False)
    assert by["session"] not in ("day-session", "") and by["client"].startswith("claude-code")
    assert night.cores()
