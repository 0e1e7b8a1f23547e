"""The agents' hooks: ``hippo hook ...`` on real payloads, and ``hippo hooks install``."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import HippoRunner, Run, WorkspaceMaker

PAYLOADS = Path(__file__).parent / "fixtures" / "hook-payloads"
NOTES = {
    "Home.md": "# Home\n\nThe ledger team's notes.\n\n## More\n\nNot in the entry section.\n",
    "Refunds.md": "---\nupdated: 2026-11-01\n---\n# Refunds\n\nRefunds go through the queue.\n",
    "Pricing.md": "# Pricing\n\nPrices are in cents.\n",
}


@pytest.fixture
def hook(hippo: HippoRunner, monkeypatch: pytest.MonkeyPatch):
    def run(event: str, payload: dict | str, cwd: Path, *extra: str) -> Run:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        return hippo("hook", event, *extra, cwd=cwd)

    return run


def real_payload(name: str, ws: Path) -> dict:
    """A payload Claude Code 2.1.332 sent, moved into the workspace ``ws``."""
    payload = json.loads((PAYLOADS / name).read_text())
    payload["cwd"] = str(ws)
    return payload


def record(ws: Path, sid: str) -> dict:
    return json.loads((ws / ".hippo" / "sessions" / f"{sid}.json").read_text())


def hooks_log() -> str:
    path = Path(os.environ["HIPPO_HOME"]) / "hooks.log"
    return path.read_text() if path.exists() else ""


def test_session_start_prints_the_required_parts_and_records_their_size(
    hook, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace('required_notes = ["Pricing.md"]\n', NOTES)
    payload = real_payload("SessionStart.json", ws)

    run = hook("session-start", payload, ws)

    assert run.code == 0 and run.err == ""
    sid = payload["session_id"]
    rec = record(ws, sid)
    block = (
        "# Home\n\nThe ledger team's notes.\n"
        "required: Pricing.md\n"
        f"session: {sid} claude-code {rec['started']}\n"
    )
    assert run.out == f"<hippo-context>\n{block}</hippo-context>\n"
    # The markers are not the block's: its size, within the budget, leaves them out.
    assert rec["kind"] == "declared" and rec["context_bytes"] == len(block.encode())
    assert "relevant" not in run.out and "linter" not in run.out


def test_the_block_is_never_stored(hook, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace("", NOTES)
    hook("session-start", real_payload("SessionStart.json", ws), ws)
    prompt = {**real_payload("UserPromptSubmit.json", ws), "prompt": "refunds"}
    assert "Refunds go through the queue." in hook("prompt", prompt, ws).out
    stored = [
        path
        for folder in (ws / ".hippo", Path(os.environ["HIPPO_HOME"]))
        if folder.exists()
        for path in folder.rglob("*")
        if path.is_file()
        and (b"The ledger team" in path.read_bytes() or b"through the queue" in path.read_bytes())
    ]
    assert stored == [p for p in stored if p.parent.name == "cache"]  # parsed notes only


def test_first_prompt_prints_relevant_notes_within_what_is_left(
    hook, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    hook("session-start", start, ws)
    prompt = real_payload("UserPromptSubmit.json", ws)
    prompt["prompt"] = "How do refunds work?"

    first = hook("prompt", prompt, ws)
    second = hook("prompt", {**prompt, "prompt": "and refunds again"}, ws)

    assert first.code == 0
    assert first.out == (
        "<hippo-context>\n"
        "relevant:\n- Refunds: Refunds go through the queue.\nlinter: overdue=0 dangling=0\n"
        "</hippo-context>\n"
    )
    assert second.out == "" and second.code == 0
    assert record(ws, prompt["session_id"])["task"] == "How do refunds work?"


def test_prompt_parts_that_do_not_fit_the_rest_of_the_budget_are_left_out(
    hook, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    hook("session-start", start, ws)
    used = record(ws, start["session_id"])["context_bytes"]
    (ws / ".hippo" / "settings.toml").write_text(f"budget_bytes = {used + 31}\n")
    prompt = real_payload("UserPromptSubmit.json", ws)
    prompt["prompt"] = "refunds"

    run = hook("prompt", prompt, ws)

    assert run.out == "<hippo-context>\nlinter: overdue=0 dangling=0\n</hippo-context>\n"
    assert "omitted: relevant notes" in hooks_log()


def test_hooks_configured_twice_print_once(hook, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    assert hook("session-start", start, ws).out
    assert hook("session-start", start, ws).out == ""


def test_a_resumed_session_gets_nothing_new_and_a_compacted_one_the_block_again(
    hook, make_workspace: WorkspaceMaker
) -> None:
    """Codex adds every session-start's output to the thread: a resume has the block."""
    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    assert hook("session-start", start, ws).out.startswith("<hippo-context>\n# Home")
    for _ in range(2):
        assert hook("session-start", {**start, "source": "resume"}, ws).out == ""
    compacted = hook("session-start", {**start, "source": "compact"}, ws)
    assert compacted.out.startswith("<hippo-context>\n# Home")
    assert hook("session-start", {**start, "source": "compact"}, ws).out == ""  # twice
    other = {**start, "session_id": "another", "source": "resume"}
    assert hook("session-start", other, ws).out.startswith("<hippo-context>\n# Home")


def test_session_end_records_the_end_with_reason_unspecified(
    hook, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", NOTES)
    hook("session-start", real_payload("SessionStart.json", ws), ws)
    end = real_payload("SessionEnd.json", ws)
    run = hook("session-end", end, ws)
    assert run.code == 0 and run.out == ""
    rec = record(ws, end["session_id"])
    assert rec["end_reason"] == "unspecified" and rec["ended"]
    assert rec["exit_reason"] == "other"


@pytest.mark.parametrize("stdin", ["", "   ", "{broken", "[1, 2]", '{"cwd": "/"}'])
def test_empty_or_broken_stdin_prints_nothing_and_exits_0(
    hook, make_workspace: WorkspaceMaker, stdin: str
) -> None:
    ws = make_workspace("", NOTES)
    for event in ("session-start", "prompt", "session-end"):
        run = hook(event, stdin, ws)
        assert (run.code, run.out) == (0, "")
    assert "hook session-start:" in hooks_log()
    assert not (ws / ".hippo" / "sessions").exists() or not list(
        (ws / ".hippo" / "sessions").glob("*.json")
    )


def test_a_hook_outside_any_workspace_does_nothing(hook, tmp_path: Path) -> None:
    payload = json.loads((PAYLOADS / "SessionStart.json").read_text())
    payload["cwd"] = str(tmp_path)
    run = hook("session-start", payload, tmp_path)
    assert (run.code, run.out) == (0, "")


def test_a_broken_workspace_is_logged_not_shown(hook, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace("budget_bytes = 'lots'\n", NOTES)
    run = hook("session-start", real_payload("SessionStart.json", ws), ws)
    assert (run.code, run.out) == (0, "")
    assert "budget_bytes" in hooks_log()


def test_an_invalid_session_id_is_hashed(hook, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace("", NOTES)
    payload = {**real_payload("SessionStart.json", ws), "session_id": "a/b" * 200}
    hook("session-start", payload, ws)
    [path] = (ws / ".hippo" / "sessions").glob("*.json")
    assert path.stem.startswith("h-") and len(path.stem) == 34


def test_codex_hooks_declare_the_derived_id(hook, make_workspace: WorkspaceMaker) -> None:
    ws = make_workspace("", NOTES)
    payload = {"session_id": "01a22ac1-2350", "cwd": str(ws), "source": "startup"}
    hook("session-start", payload, ws, "--tool", "codex")
    assert record(ws, "codex-01a22ac1-2350")["tool"] == "codex"


# hippo hooks install / uninstall


def test_install_merges_keeps_other_hooks_and_is_idempotent(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "x"}]}
            ],
        },
    }
    settings.write_text(json.dumps(theirs))

    first = hippo("hooks", "install", "claude-code", cwd=ws)
    after_first = settings.read_text()
    second = hippo("hooks", "install", "claude-code", cwd=ws)

    assert first.code == 0 and "added SessionStart, UserPromptSubmit, SessionEnd" in first.out
    assert second.code == 0 and "already has hippo's hooks" in second.out
    assert settings.read_text() == after_first
    data = json.loads(after_first)
    assert data["model"] == "opus"
    assert data["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    commands = [h["command"] for g in data["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands[0] == "x" and commands[1].endswith("hook session-start")
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].endswith("hook prompt")

    removed = hippo("hooks", "uninstall", "claude-code", cwd=ws)
    assert removed.code == 0 and "removed 3 hippo hooks" in removed.out
    assert json.loads(settings.read_text()) == theirs


def test_install_for_the_user_honours_claude_config_dir(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    run = hippo("hooks", "install", "claude-code", "--user", cwd=make_workspace())
    assert run.code == 0
    assert "SessionEnd" in json.loads((tmp_path / "cc" / "settings.json").read_text())["hooks"]


def test_install_refuses_a_settings_file_that_is_not_json(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    run = hippo("hooks", "install", "claude-code", cwd=ws)
    assert run.code == 1 and "not valid JSON" in run.err and run.err.endswith("\n")
    assert settings.read_text() == "{ not json"


def test_install_for_codex_writes_its_hooks_file(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    run = hippo("hooks", "install", "codex", cwd=ws)
    data = json.loads((ws / ".codex" / "hooks.json").read_text())
    assert run.code == 0 and "note: Codex loads a project's hooks only in a project" in run.out
    command = data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command.endswith("hook session-start --tool codex")
    timeouts = {event: groups[0]["hooks"][0]["timeout"] for event, groups in data["hooks"].items()}
    assert timeouts == {"SessionStart": 30, "UserPromptSubmit": 30, "SessionEnd": 3}


def test_install_for_an_unknown_agent_is_a_usage_error(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    run = hippo("hooks", "install", "cursor", cwd=make_workspace())
    assert run.code == 2 and "claude-code, codex, gemini and opencode, not 'cursor'" in run.err


def test_the_first_prompt_is_kept_redacted_and_a_private_one_not_at_all(
    hook, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace("", NOTES)
    prompt = real_payload("UserPromptSubmit.json", ws)
    hook("prompt", {**prompt, "prompt": "deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, ws)
    task = record(ws, prompt["session_id"])["task"]
    assert "ghp_" not in task and "[redacted:github-token]" in task

    private = {**prompt, "session_id": "other", "prompt": "<private-session>\nsecret plans"}
    hook("prompt", private, ws)
    rec = record(ws, "other")
    assert rec["task"] is None and rec["private"] is True


def test_a_session_the_hook_ended_gets_its_last_answer_as_a_derived_handoff(
    hook, make_workspace: WorkspaceMaker, claude_home: Path, hippo: HippoRunner
) -> None:
    from tests.claude_factory import ClaudeSession

    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    sid = start["session_id"]
    hook("session-start", start, ws)
    session = ClaudeSession(claude_home, str(ws), session=sid)
    session.prompt("fix the pricing page").answer("Looking.")
    session.prompt("and the tests").answer("Fixed the pricing page; see [[Pricing]].").write()
    assert hippo("ingest", cwd=ws).code == 0  # the last turn is indexed before the end
    hook("session-end", real_payload("SessionEnd.json", ws), ws)
    assert record(ws, sid)["handoff"] is None
    assert hippo("ingest", cwd=ws).code == 0
    rec = record(ws, sid)
    assert rec["handoff"] == "Fixed the pricing page; see [[Pricing]]." and rec["handoff_derived"]
    assert rec["kind"] == "declared" and rec["end_reason"] == "unspecified"
    # The session's own words win, and ingest leaves them alone.
    assert hippo("session", "end", "--id", sid, "--handoff", "Mine.", cwd=ws).code == 0
    session.prompt("one more").answer("Done again.").write()
    assert hippo("ingest", cwd=ws).code == 0
    rec = record(ws, sid)
    assert rec["handoff"] == "Mine." and rec["handoff_derived"] is False


def gemini_payload(event: str, ws: Path, sid: str, **fields: str) -> dict:
    """What Gemini CLI sends its hooks (its hooks reference: the base fields, and each
    event's own)."""
    base = {
        "session_id": sid,
        "transcript_path": f"/home/dev/.gemini/tmp/proj/chats/session-{sid}.jsonl",
        "cwd": str(ws),
        "hook_event_name": event,
        "timestamp": "2026-11-30T04:56:03.000Z",
    }
    return {**base, **fields}


def test_gemini_hooks_print_json_and_declare_the_session_ingest_derives(
    hook, hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    from hippo_core.plugins.manager import load_plugins
    from hippo_core.transcripts.model import Resume

    chat = next((Path(__file__).parent / "fixtures/transcripts/gemini").rglob("session-*.jsonl"))
    [derived] = load_plugins().sources()["gemini"].parse(chat, Resume()).sessions
    sid = derived.native_id
    ws = make_workspace("", NOTES)
    assert hippo("hooks", "install", "gemini", cwd=ws).code == 0
    settings = json.loads((ws / ".gemini" / "settings.json").read_text())
    handlers = {event: groups[0]["hooks"][0] for event, groups in settings["hooks"].items()}
    assert sorted(handlers) == ["BeforeAgent", "SessionEnd", "SessionStart"]
    assert handlers["BeforeAgent"]["command"].endswith("hook prompt --tool gemini")
    assert {h["timeout"] for h in handlers.values()} == {30000}  # milliseconds

    start = hook(
        "session-start",
        gemini_payload("SessionStart", ws, sid, source="startup"),
        ws,
        "--tool",
        "gemini",
    )
    output = json.loads(start.out)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert output["additionalContext"].startswith("<hippo-context>\n# Home\n")
    prompt = gemini_payload("BeforeAgent", ws, sid, prompt="How do refunds work?")
    first = json.loads(hook("prompt", prompt, ws, "--tool", "gemini").out)
    assert first["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "Refunds go through the queue." in first["hookSpecificOutput"]["additionalContext"]
    assert hook("prompt", prompt, ws, "--tool", "gemini").out == ""  # silence, not text
    end = gemini_payload("SessionEnd", ws, sid, reason="exit")
    assert hook("session-end", end, ws, "--tool", "gemini").out == ""
    rec = record(ws, derived.id)
    assert (rec["tool"], rec["task"], rec["exit_reason"]) == (
        "gemini",
        "How do refunds work?",
        "exit",
    )
    assert hooks_log() == ""


def test_a_resumed_gemini_session_gets_the_block_again(hook, make_workspace: WorkspaceMaker):
    """Gemini CLI resumes without every user message that begins with a hook's context (in
    ``gemini -p``, the first prompt with SessionStart's block in it): the block goes again."""
    ws = make_workspace("", NOTES)
    start = gemini_payload("SessionStart", ws, "g1", source="startup")
    assert "<hippo-context>" in hook("session-start", start, ws, "--tool", "gemini").out
    resumed = {**start, "source": "resume", "timestamp": "2026-11-30T05:30:00.000Z"}
    again = json.loads(hook("session-start", resumed, ws, "--tool", "gemini").out)
    assert again["hookSpecificOutput"]["additionalContext"].startswith("<hippo-context>\n# Home")
    assert hooks_log() == ""


def test_install_puts_right_the_timeout_codex_clamps(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    path = ws / ".codex" / "hooks.json"
    assert hippo("hooks", "install", "codex", cwd=ws).code == 0
    data = json.loads(path.read_text())
    data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] = 30  # as hippo wrote it before
    path.write_text(json.dumps(data))
    run = hippo("hooks", "install", "codex", cwd=ws)
    assert f"set the timeout of SessionEnd in {path}" in run.out
    assert json.loads(path.read_text())["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert "already has hippo's hooks" in hippo("hooks", "install", "codex", cwd=ws).out


def test_install_for_codex_says_what_codex_has_not_trusted(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    """Codex keeps a trusted_hash per hook in its config.toml and skips the rest."""
    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    ws = make_workspace()
    hooks = ws / ".codex" / "hooks.json"
    config = codex / "config.toml"
    config.write_text(f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    run = hippo("hooks", "install", "codex", cwd=ws)
    assert (
        "note: Codex has not trusted them (SessionEnd, SessionStart, UserPromptSubmit), so it"
        " skips them without a word" in run.out
    )
    assert "--dangerously-bypass-hook-trust" in run.out
    state = "".join(
        f'[hooks.state."{hooks}:{label}:0:0"]\ntrusted_hash = "sha256:{label}"\n'
        for label in ("session_start", "user_prompt_submit")
    )
    config.write_text(config.read_text() + state)
    run = hippo("hooks", "install", "codex", cwd=ws)
    assert "Codex has not trusted them (SessionEnd)," in run.out
    config.write_text(
        config.read_text() + f'[hooks.state."{hooks}:session_end:0:0"]\ntrusted_hash = "x"\n'
    )
    assert "note:" not in hippo("hooks", "install", "codex", cwd=ws).out
    config.write_text(config.read_text() + "[features]\nhooks = false\n")
    assert (
        "turns hooks off (hooks = false under [features])"
        in hippo("hooks", "install", "codex", cwd=ws).out
    )


def test_another_agents_payload_and_two_agents_on_one_session(
    hook, hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    """A Claude Code payload given to the Gemini hook is read as Gemini's; the same id sent
    by two agents makes two sessions, one per agent; broken agent configs stay untouched."""
    ws = make_workspace("", NOTES)
    start = real_payload("SessionStart.json", ws)
    as_gemini = hook("session-start", start, ws, "--tool", "gemini")
    assert json.loads(as_gemini.out)["hookSpecificOutput"]["additionalContext"]
    as_codex = hook("session-start", start, ws, "--tool", "codex")
    assert as_codex.out.startswith("<hippo-context>\n# Home")
    sid = start["session_id"]
    assert record(ws, f"gemini-{sid}")["tool"] == "gemini"
    assert record(ws, f"codex-{sid}")["tool"] == "codex"
    assert hooks_log() == ""

    settings = ws / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}, // a comment\n}')
    run = hippo("hooks", "install", "gemini", cwd=ws)
    assert run.code == 1 and "not valid JSON" in run.err
    assert settings.read_text() == '{"hooks": {}, // a comment\n}'

    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text("[projects\nbroken")
    monkeypatch.setenv("CODEX_HOME", str(codex))
    run = hippo("hooks", "install", "codex", cwd=ws)
    assert run.code == 0 and "config.toml cannot be read (" in run.out
    assert (codex / "config.toml").read_text() == "[projects\nbroken"
