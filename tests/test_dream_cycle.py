"""The dream over time: the window and its chunks, consolidate, the queue reviewer, the
lock, the warnings in the context block, and a run that dies half way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hippo_core.files.locks import file_lock
from tests.dream_scene import (
    CONFIRM,
    CONSOLIDATE_REVIEWER,
    CONSOLIDATOR,
    PROPOSER,
    TESTING,
    Scene,
    replace,
)
from tests.test_plugins import make_distribution


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def set_state(scene: Scene, **values: str) -> None:
    (scene.root / ".hippo/dream-state.json").write_text(json.dumps(values))


def state(scene: Scene) -> dict:
    return json.loads((scene.root / ".hippo/dream-state.json").read_text())


def test_the_window_runs_in_24_hour_chunks_from_the_last_success(scene: Scene):
    scene.transcript(hours_ago=2)
    scene.proposer_replies()
    start = datetime.now(UTC) - timedelta(days=3, hours=1)
    set_state(scene, last_success=stamp(start))
    assert scene.dream().code == 0
    chunks = [line for line in scene.section("Window") if line.startswith("- chunk ")]
    assert len(chunks) == 4
    assert chunks[0] == (
        f"- chunk {stamp(start)} to {stamp(start + timedelta(days=1))}: done, "
        "0 sessions (no model call)"
    )
    # The session ran two hours ago: in the third chunk, which ends an hour ago.
    assert chunks[2].endswith("done, 1 session, 1 model call")
    assert chunks[3].endswith("done, 0 sessions (no model call)")
    assert len(scene.calls()) == 1
    assert state(scene)["last_success"] > stamp(start + timedelta(days=3))


def test_a_failed_chunk_is_retried_by_the_next_run(scene: Scene):
    scene.transcript(hours_ago=2)
    scene.model({"when": [PROPOSER], "exit": 2, "stderr": "rate limited"})
    start = datetime.now(UTC) - timedelta(days=2, hours=1)
    set_state(scene, last_success=stamp(start))
    run = scene.dream()
    assert run.code == 1 and "rate limited" in run.err
    window = scene.section("Window")
    assert window[-2].endswith(": failed") and window[-1].endswith(": not run")
    # The first chunk completed; the second (with the session) failed and stays.
    assert state(scene)["last_success"] == stamp(start + timedelta(days=1))
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    assert scene.report().startswith("status: ok")
    assert "uv run pytest -q" in scene.note.read_text()


def test_consolidate_appends_what_a_session_handed_off(scene: Scene):
    session = scene.transcript(hours_ago=1)
    hippo, root = scene.hippo, scene.root
    assert hippo("session", "start", "--id", session, "--tool", "claude-code", cwd=root).code == 0
    handoff = "Switched the suite to uv; see [[Testing]]."
    assert hippo("session", "end", "--id", session, "--handoff", handoff, cwd=root).code == 0
    day = datetime.now(UTC).strftime("%Y-%m-%d")  # the day the session ended
    addition = f"- {day}: The suite runs with `uv run pytest -q`; the Makefile is gone.\n"
    proposal = {
        "note": "Testing.md",
        "kind": "append",
        "old": "",
        "new": addition,
        "reason": "The session switched to uv.",
        "evidence": [{"session": session, "ordinal": 0}],
    }
    scene.model(
        {"when": [CONSOLIDATOR], "reply": json.dumps([proposal])},
        {"when": [CONSOLIDATE_REVIEWER], "reply": CONFIRM},
        {"when": [PROPOSER], "reply": "[]"},
    )
    assert scene.dream().code == 0
    assert scene.note.read_text() == TESTING + addition
    [consolidate, *_] = scene.calls()
    assert handoff in consolidate["prompt"] and "### Note `Testing.md`" in consolidate["prompt"]


def test_the_queue_reviewer_waits_for_hippo_review(scene: Scene):
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text() + 'review = "queue"\n')
    scene.transcript()
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    assert scene.note.read_text() == TESTING and scene.files("receipts") == []
    [proposal] = scene.files("proposals")
    listed = scene.hippo("review", cwd=scene.root)
    assert listed.out.split() == [proposal.stem, "core/verify", "replace", "Testing.md"]
    shown = scene.hippo("review", proposal.stem, cwd=scene.root)
    assert "+++ new\nRun the tests with `uv run pytest -q`" in shown.out
    done = scene.hippo("review", proposal.stem, "--confirm", "--notes", "checked", cwd=scene.root)
    assert done.code == 0 and done.out.startswith("applied: Testing.md; receipt ")
    assert "uv run pytest -q" in scene.note.read_text()
    receipt = json.loads((scene.root / ".hippo/receipts" / proposal.name).read_text())
    assert receipt["reviewer"]["name"] == "queue" and receipt["verdict_notes"] == "checked"
    again = scene.hippo("review", proposal.stem, "--reject", cwd=scene.root)
    assert again.code == 1 and "has a receipt already" in again.err
    assert scene.hippo("review", cwd=scene.root).err == "nothing is waiting for a verdict\n"


def test_a_second_dream_in_the_same_workspace_is_refused(scene: Scene):
    from hippo_core.dream.run import dream_lock_path
    from hippo_core.workspace.folder import Workspace

    with file_lock(dream_lock_path(Workspace.open(scene.root))):
        run = scene.dream()
    assert run.code == 1
    assert "another hippo dream is running in this workspace" in run.err


def test_the_warnings_in_the_context_block(scene: Scene):
    def first_lines() -> list[str]:
        out = scene.hippo("context", cwd=scene.root).out.splitlines()
        return [line for line in out if line.startswith("warning:")]

    assert first_lines() == []  # no report yet
    reports = scene.root / ".hippo/reports"
    reports.mkdir()
    old = datetime.now(UTC) - timedelta(hours=40)
    set_state(scene, last_success=stamp(old))
    (reports / "2026-11-01-dream.md").write_text("status: ok\n\n## Window\n\n- from ...\n")
    assert first_lines() == [f"warning: last dreaming success {stamp(old)} (older than 36 hours)"]
    (reports / "2026-11-02-dream.md").write_text("status: failed\nerror: x\n")
    assert first_lines() == [
        f"warning: last dreaming success {stamp(old)} (older than 36 hours)",
        "warning: last dreaming run failed",
    ]
    set_state(scene, last_success=stamp(datetime.now(UTC)))
    (reports / "2026-11-02-2-dream.md").write_text("status: ok\n")
    assert first_lines() == []


KILLER = """
import os, signal
from hippo_core import hookimpl

@hookimpl
def hippo_event(workspace, event):
    if event.name == "applying":
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_run_killed_between_snapshot_and_apply(scene: Scene, tmp_path: Path):
    scene.transcript()
    scene.proposer_replies(replace())
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "hippo-killer", "hippo_killer", KILLER)
    env = {**os.environ, "PYTHONPATH": str(site), "HIPPO_LOAD_PLUGINS": "hippo_killer"}
    killed = subprocess.run(
        [sys.executable, "-m", "hippo_core", "dream"], cwd=scene.root, env=env, check=False
    )
    assert killed.returncode == -9
    assert scene.note.read_text() == TESTING  # whole: the old note
    [receipt] = scene.files("receipts")
    assert json.loads(receipt.read_text())["state"] == "applying"
    assert scene.hippo("dream", cwd=scene.root).code == 0
    record = json.loads(receipt.read_text())
    assert record["state"] == "interrupted" and record["applied"] == ""
    assert "before the note was written" in record["detail"]
    assert any(
        "left by an interrupted run, now interrupted" in line for line in scene.section("Applied")
    )


def test_a_dream_through_an_openai_compatible_server(scene: Scene):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    session = scene.transcript()
    proposal = json.dumps([replace()]).replace("SESSION", session)
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            system = body["messages"][0]["content"]
            reviewer = system.startswith("You are the reviewer")
            content = CONFIRM if reviewer else proposal
            answer = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        settings = scene.root / ".hippo/settings.toml"
        settings.write_text(
            'model_backend = "openai"\n[openai]\n'
            f'url = "http://127.0.0.1:{httpd.server_address[1]}/v1"\nmodel = "local"\n'
        )
        run = scene.dream()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert run.code == 0, run.err
    assert "uv run pytest -q" in scene.note.read_text()
    # each call: the pass's instructions or the reviewer's persona as the system message,
    # then the material
    assert [[m["role"] for m in body["messages"]] for body in seen] == [["system", "user"]] * 2
    assert all(body["model"] == "local" for body in seen)
    receipt = json.loads(scene.files("receipts")[0].read_text())
    assert receipt["invocation"]["proposer"]["backend"] == "openai"


def test_doctor_reports_on_dreaming(scene: Scene):
    doctor = scene.hippo("doctor", cwd=scene.root)
    assert "info: packs: passes that dream here: core/consolidate, core/verify" in doctor.out
    assert "info: model: no model configured" in doctor.out
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text().replace("per_note", "per_nope"))
    scene.model({"reply": "[]"})
    doctor = scene.hippo("doctor", cwd=scene.root)
    assert doctor.code == 1
    assert (
        "error: packs: pack 'core' did not run: .hippo/packs/core/passes/verify.toml: unknown "
        "key 'per_nope' - did you mean 'per_note'?"
    ) in doctor.out
    assert "info: model: dreaming runs " in doctor.out


def test_a_broken_pack_fails_the_run_with_one_line_naming_the_file(scene: Scene):
    verify = scene.root / ".hippo/packs/core/passes/verify.toml"
    verify.write_text(verify.read_text().replace('"HIPPO_V1"', '"HIPPO_V2"'))
    scene.proposer_replies()
    run = scene.dream()
    assert run.code == 1
    expected = (
        "pack 'core' did not run: .hippo/packs/core/passes/verify.toml: protocol must be "
        '"HIPPO_V1", found "HIPPO_V2"'
    )
    assert run.err == f"error: {expected}\n"
    assert scene.report().splitlines()[:2] == ["status: failed", f"error: {expected}"]
    assert scene.calls() == []


def test_a_failed_first_run_is_retried_from_its_chunk(scene: Scene):
    scene.transcript(hours_ago=2)
    scene.model({"when": [PROPOSER], "exit": 2, "stderr": "rate limited"})
    assert scene.dream().code == 1
    saved = state(scene)
    assert "last_success" not in saved and saved["retry_from"]
    scene.proposer_replies(replace())
    assert scene.dream().code == 0
    window = scene.section("Window")
    assert window[0].startswith(f"- from {saved['retry_from']} to ")
    assert "retry_from" not in state(scene)


def test_since_24h_makes_one_chunk(scene: Scene):
    scene.proposer_replies()
    assert scene.dream("--since", "24h").code == 0
    assert len([line for line in scene.section("Window") if line.startswith("- chunk ")]) == 1


def test_since_2d_makes_two_whole_chunks_and_last_success_never_moves_back(scene: Scene):
    scene.transcript(hours_ago=2)  # only the second chunk has a turn, and asks the model
    scene.model({"exit": 1, "stderr": "model down"})
    last = stamp(datetime.now(UTC) - timedelta(hours=1))
    set_state(scene, last_success=last)
    assert scene.dream("--since", "2d").code == 1
    window = scene.section("Window")
    assert any(line.endswith(": 2 chunks of at most 24 hours") for line in window), window
    assert len([line for line in window if line.endswith(": failed")]) == 1
    # The replay's first chunk ended a day before dreaming had got to; its second failed:
    # dreaming still resumes where it was, and is not sent back to redo the day.
    assert state(scene)["last_success"] == last and "retry_from" not in state(scene)


def test_a_consolidate_append_is_not_made_twice(scene: Scene):
    scene.note.write_text(TESTING + "- 2026-11-30: The suite runs with `uv run pytest -q`.\n")
    session = scene.transcript(hours_ago=1)
    hippo, root = scene.hippo, scene.root
    hippo("session", "start", "--id", session, "--tool", "claude-code", cwd=root)
    hippo("session", "end", "--id", session, "--handoff", "See [[Testing]].", cwd=root)
    proposal = {
        "note": "Testing.md",
        "kind": "append",
        "old": "",
        "new": "- 2026-11-30: The suite runs with `uv run pytest -q`.\n",
        "reason": "again",
        "evidence": [{"session": session, "ordinal": 0}],
    }
    scene.model(
        {"when": [CONSOLIDATOR], "reply": json.dumps([proposal])},
        {"when": [PROPOSER], "reply": "[]"},
    )
    assert scene.dream().code == 0
    [failure] = scene.section("Validation failures")
    assert "the note already has this text" in failure
