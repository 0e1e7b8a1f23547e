"""Every text the sleep pack keeps is redacted like a transcript (finding R1).

One night with every secret family of the security review planted in every way text enters
the pack: ``hippo remember`` (plain, ``--verbatim``, a topic), a brief's summary and hints,
the voice card and its ``why`` (the CLI, the MCP tool and ``PUT /voice`` on the real
service), a session's handoff, a critique, a note and the edits of a terminal draft (the
CLI and a decisions file), and a forget's reason. The night runs with the scripted drafting
model (an approval, a denial, a redraft, a landing with edits); then no raw secret may be in
any file under the workspace or ``$HIPPO_HOME`` (raw bytes), in any file name, in any
request the drafting model received, or in any webhook body.

Secrets are built by concatenation so that secret scanners do not flag this file; each has
the real shape of its kind.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.local_http import start_server
from tests.models.chat_server import ChatServer
from tests.sleep_scene import make_sleepy, model_settings
from tests.test_mcp import Agent, drive
from tests.test_sleep_service import serving, stop

KEY_LINE = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
#: family: (the raw secret that must appear nowhere, the line it is written in)
PLANTED = {
    "aws access key": ("AKIA" + "QWERTYUIOP123456", "aws key {} in prose"),
    "aws secret": ("wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzEXAMPLEKEY", "aws_secret_access_key = {}"),
    "ghp_": ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "token {} for the bot"),
    "github_pat_": ("github_pat_" + "11ABCDEFG0abcdefghijkl_" + "m" * 59, "pat {} too"),
    "xoxb-": ("xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx", "slack {}"),
    "sk_live_": ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe {}"),
    "sk-proj-": ("sk-proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34Mn56", "openai {}"),
    "sk-ant-api03-": ("sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCd_EfGh", "claude {}"),
    "private key": (
        KEY_LINE,
        "-----BEGIN RSA PRIVATE KEY-----\n{}\naFDrBz9vFqU4yFQW7eY+rX0fH3hJ0cB9L0oQ2wV5uT==\n"
        "-----END RSA PRIVATE KEY-----",
    ),
    "jwt": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
        + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "session {}",
    ),
    "glpat-": ("glpat-" + "x1Y2z3A4b5C6d7E8f9G0", "gitlab {}"),
    "npm_": ("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm {}"),
    "hf_": ("hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "hugging face {}"),
    "SG.": ("SG." + "aBcDeFgHiJkLmNoPqRsTuV" + "." + "w" * 18 + "X1y2Z3a4b5C6d7E8f9G0h1I2j", "{}"),
    "AccountKey=": (
        "aBcD" * 22 + "==",
        "DefaultEndpointsProtocol=https;AccountName=ledger;AccountKey={};EndpointSuffix=x",
    ),
    "postgres:// password": ("Pg5ecretPw77", "DATABASE_URL=postgres://ledger:{}@db:5432/ledger"),
    "mysql:// password": ("My@Sql-Pw-91", "mysql://root:{}@db/app"),
    "https:// password": ("Htt9sPassw0rd", "git push https://bot:{}@git.example.com/x.git"),
    "token as a URL's user": (
        "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8",
        "git clone https://{}@github.com/acme/ledger.git",
    ),
    "DB_PASSWORD=": ("Db9assW0rdValue", "export DB_PASSWORD={}"),
    "Authorization: Bearer": (
        "abcdefghijklmnop0123456789XYZ",
        'curl -H "Authorization: Bearer {}"',
    ),
    "mysql -pPASS": ("Sup3rS3cretFlag", "mysql -u root -p{} -h db"),
    "sshpass -p": ("ssHpassW0rd99", "sshpass -p {} ssh deploy@host"),
}
RAW = {family: secret for family, (secret, _line) in PLANTED.items()}
LINES = [line.format(secret) for secret, line in PLANTED.values()]
#: What every way in is given: plain words the drafting model's answer can be drawn from,
#: then every secret.
SECRETS = "Deploy notes: the deploy keys rotate monthly.\n" + "\n".join(LINES)
ONE_LINE = " ".join(SECRETS.split())
DRAFTED = "Deploy notes: the deploy keys rotate monthly"
EVENTS = [
    *("draft_submitted", "sleep_failed", "chain_ended", "purged", "brief_unmatched"),
    *("sleep_done", "tend_resubmitted", "catch_up", "brief_requested"),
]


def test_every_planted_secret_in_every_way_in_is_never_kept_sent_or_named(
    make_workspace: WorkspaceMaker,
    hippo: HippoRunner,
    chat: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert all(secret in SECRETS for secret in RAW.values())
    heard: list[bytes] = []

    class Webhook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            heard.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    hook_url, stop_hook = start_server(Webhook, monkeypatch)
    settings = model_settings(chat.url, max_attempts=2)
    settings += "[sleep.voice]\nenabled = true\nmax_chars = 8000\n"
    settings += (
        f"[sleep.notify]\nwebhook_url = {json.dumps(hook_url)}\nevents = {json.dumps(EVENTS)}\n"
    )
    night = make_sleepy(make_workspace(), hippo, settings)
    outside = tmp_path / "given"  # what a person hands hippo, outside the workspace and home
    outside.mkdir()
    chat.operations(
        {"kind": "new_core", "content": DRAFTED, "source_indexes": [1], "rationale": ONE_LINE},
        when=("You turn short-term memory fragments",),
    )

    # A session's task and handoff (taken as a fragment at the next tick).
    session = night.ok("session", "start", "--task", ONE_LINE).out.strip()
    night.ok("session", "end", "--id", session, "--handoff", SECRETS)
    # Fragments: plain text, a topic, word for word.
    night.remember(SECRETS, f"deploy, {ONE_LINE}")
    night.remember(SECRETS, "deploy", "--verbatim")

    # The MCP tools, through the SDK's client and `hippo mcp`.
    async def agent_calls(agent: Agent) -> None:
        await agent.ok("remember", text=SECRETS, topic=f"deploy, {LINES[0]}")
        await agent.ok("submit_brief", summary=SECRETS, promote_hints=["deploy", *LINES[:5]])
        await agent.ok("set_voice_card", text=f"MCP card: {SECRETS}", why=SECRETS)

    drive(night.root, outside / "mcp.log", agent_calls)

    # An HTTP route of the real service.
    served = serving(night.root)
    try:
        body = json.dumps({"text": f"HTTP card: {SECRETS}", "why": SECRETS})
        answer = served.ask("PUT", "/voice", body, headers={"Content-Type": "application/json"})
        assert answer[0] == 200 and answer[1]["changed"] is True
    finally:
        stop(served)

    # The CLI: the card, and the brief the sleep uses (its hints steer and go unmatched).
    night.ok("voice", "set", f"CLI card: {SECRETS}", "--why", SECRETS)
    hints = [f"--promote={h}" for h in ("deploy", "handoff", f"vault {LINES[5]}")]
    hints += [f"--noise=chatter {LINES[6]}", f"--completed-intent={LINES[7]}"]
    night.ok("brief", "--summary", SECRETS, *hints)

    # The night: a draft of the verbatim fragment and the two clusters, reviewed with an
    # approval and a denial whose critique comes back in the redraft's prompt.
    night.ok("nudge")
    first = night.draft()
    kinds = [op["kind"] for op in first["operations"]]
    assert kinds == ["verbatim", "new_core", "new_core"], first["operations"]
    reviewed = night.ok(
        "review", first["id"], "--approve", "0", "--approve", "2",
        "--deny", f"1=not this: {SECRETS}", "--note", ONE_LINE,
    )  # fmt: skip
    assert "operation 0: landed in notes/cores/" in reviewed.out
    verbatim_core = night.draft()["operations"][0]["long_term_id"]
    chat.operations(
        {
            "kind": "attach",
            "target_core_id": verbatim_core,
            "content": "the deploy keys rotate monthly",
            "source_indexes": [1],
        },
        when=("its reviewer denied it",),
    )
    chat.rules.insert(0, chat.rules.pop())  # the redraft's rule before the draft's
    night.ok("nudge")
    second = night.draft()
    assert second["terminal"] and second["attempt"] == 2
    decisions = outside / "decisions.json"
    decisions.write_text(
        json.dumps(
            [
                {
                    "op": 0,
                    "verdict": "approve",
                    "restate": True,
                    "edited_content": f"edited: {SECRETS}",
                    "edited_restated_content": f"restated: {SECRETS}",
                    "note": SECRETS,
                }
            ]
        )
    )
    landed = night.json("review", second["id"], "--decisions", str(decisions))
    assert landed["approved"] == 1
    night.ok("sleep", "tick")
    night.ok("forget", verbatim_core, "--reason", SECRETS)
    night.ok("log")
    for thread in threading.enumerate():
        if thread.name.startswith("hippo-notify-"):
            thread.join(30)
    stop_hook()

    # Every prompt the drafting model read: the drafts, the redraft with its critique.
    prompts = [json.dumps(r, ensure_ascii=False) for r in chat.requests]
    assert len(prompts) == 3
    assert "[redacted:github-token]" in chat.prompts[0] and "CLI card:" in chat.prompts[0]
    assert "critique: not this: Deploy notes" in chat.prompts[-1]
    for prompt in prompts:
        assert_no_secret(prompt, "a prompt to the drafting model")
    assert heard, "the webhook heard nothing"
    assert any(b'"brief_unmatched"' in body for body in heard)
    for body in heard:
        assert_no_secret(body.decode("utf-8"), "a webhook body")

    # Every file under the workspace and $HIPPO_HOME, read as bytes, and every file name.
    cores = night.cores()
    assert len(cores) == 2 and any("[redacted:aws-access-key]" in text for text in cores.values())
    files = [p for root in (night.root, tmp_path / "home") for p in root.rglob("*")]
    assert any(".hippo/sleep/voice.json" in p.as_posix() for p in files)
    for path in files:
        shown = path.relative_to(tmp_path).as_posix()
        assert_no_secret_in_name(shown)
        if path.is_file():
            assert_no_secret(path.read_bytes().decode("utf-8", "replace"), shown)


def assert_no_secret(text: str, where: str) -> None:
    found = [family for family, secret in RAW.items() if secret in text]
    assert not found, f"{where} holds the raw {', '.join(found)}"


def assert_no_secret_in_name(name: str) -> None:
    """A core's file name is a slug of its words: look for each secret's letters and digits,
    lower case, as runs of eight or more."""
    lowered = name.lower()
    for family, secret in RAW.items():
        for run in re.findall(r"[a-z0-9]{8,}", secret.lower()):
            assert run not in lowered, f"the file name {name} holds the {family}"


def test_a_secret_the_drafting_model_writes_of_its_own_is_redacted_too(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, chat: ChatServer
) -> None:
    """What the model answers is text coming in: its operations, and an answer that is not
    the JSON asked for (kept in the sleep's history), are redacted before they are kept."""
    night = make_sleepy(make_workspace(), hippo, model_settings(chat.url))
    night.core_note("deploy-keys", "Deploy keys rotate")
    aws, token = RAW["aws access key"], RAW["ghp_"]
    chat.operations(
        {
            "kind": "new_core",
            "content": f"{aws} deploy keys rotate monthly",
            "topic": f"deploy {token}",
            "source_indexes": [1],
            "rationale": f"the key is {token}",
        },
        {
            "kind": "attach",
            "target_core_id": "deploy-keys",
            "content": "the deploy keys rotate monthly",
            "restated_content": f"Deploy keys rotate monthly, {token}",
        },
        {"kind": "attach", "target_core_id": token, "content": "the deploy keys rotate"},
        when=("the deploy keys rotate monthly",),
    )
    chat.add(f"I cannot answer that: the token is {token}", "the printer jams")
    night.remember("the deploy keys rotate monthly", "deploy")
    night.remember("the printer jams on floor two", "office")
    night.ok("brief", "--summary", "keys", "--promote", "deploy", "--promote", "office")
    night.ok("nudge")
    op, attach = night.draft()["operations"]
    assert attach["restated_content"] == "Deploy keys rotate monthly, [redacted:github-token]"
    assert night.draft()["extra"]["dropped"] == [
        {"topic": "deploy", "operation": "2", "why": "no core '[redacted:github-token]'"}
    ]
    assert op["content"] == "[redacted:aws-access-key] deploy keys rotate monthly"
    assert op["topic"] == "deploy [redacted:github-token]"
    assert op["rationale"] == "the key is [redacted:github-token]"
    [failure] = night.state()["sleeps"][-1]["model_failures"]
    assert failure["why"] == (
        "the model's answer was not the JSON asked for (`hippo sleep history` shows how it began)"
    )
    assert failure["answer"] == "I cannot answer that: the token is [redacted:github-token]"
    night.ok("review", night.draft()["id"], "--approve", "0", "--deny", "1=not now")
    assert "redacted-aws-access-key-deploy-keys-rotate-monthly" in night.cores()
    for path in night.root.rglob("*"):
        assert_no_secret_in_name(path.as_posix())
        if path.is_file():
            assert_no_secret(path.read_bytes().decode("utf-8", "replace"), path.as_posix())


def test_a_draft_an_older_hippo_kept_raw_lands_redacted(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """A draft written before redaction (committed, reviewed later) still makes a core whose
    file name, title and text are redacted; a purge's reason is redacted in its tombstone."""
    night = make_sleepy(make_workspace(), hippo)  # mechanical: the longest fragment lands
    for text in ("deploys run from main", "deploy from main only", "main is where we deploy"):
        night.remember(text, "deploy")
    night.ok("sleep", "now", "--without-brief")
    draft = night.draft()
    aws = RAW["aws access key"]
    draft["operations"][0]["content"] = f"Deploy key {aws} rotates monthly"
    path = night.root / ".hippo/sleep/drafts" / f"{draft['id']}.json"
    path.write_text(json.dumps(draft))
    night.ok("review", draft["id"], "--approve", "0")
    [(name, text)] = night.cores().items()
    assert name == "deploy-key-redacted-aws-access-key-rotates-monthly"
    assert "\n# Deploy key [redacted:aws-access-key] rotates monthly\n" in text
    assert aws not in text
    night.ok("forget", name, "--now", "--reason", f"it held {aws}")
    [stone_path] = (night.root / ".hippo/sleep/tombstones").glob("t*.json")
    stone = json.loads(stone_path.read_text())
    assert stone["reason"] == "it held [redacted:aws-access-key]"
