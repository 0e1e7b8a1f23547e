"""The ripple: waking the main model when it is its turn (a brief to write, a draft to
review), since nobody may be at the keyboard.

A ``hippo_event`` plugin, like the webhook. ``type = "script"`` starts a command without a
shell (``{message}``, ``{event}`` and ``{draft_id}`` filled in per argument; the message on
stdin instead with ``stdin = true``; ``HIPPO_RIPPLE_EVENT``, ``HIPPO_RIPPLE_MESSAGE`` and
``HIPPO_RIPPLE_JSON`` in its environment) and lets it run beside the cycle; ``type =
"endpoint"`` POSTs the event and its message with a bearer (signed, with a secret, as the
webhook signs; never followed through a redirect). One ripple at a time per event:
while the last one for an event still runs, the next is kept and fired by the first tick
after it ended (:func:`catch_up`); one that runs past ``timeout_seconds`` is stopped there.
Run as root, a script needs ``run_as``, an account to run it as, and is refused without one.
What each ripple did is kept in ``ripples.jsonl`` by the event's id.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from typing import TYPE_CHECKING, Any

from hippo_core import HippoError, process_alive, without_agent
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import Event, Workspace
    from hippo_packs.sleep.config import SleepRipple, SleepSettings

#: Starts the ripple in the background, its message on stdin when asked, and prints its pid:
#: the command outlives the tick that started it, and is nobody's child to wait for.
LAUNCH = (
    'if [ -n "$HIPPO_RIPPLE_STDIN" ]; then '
    'printf "%s" "$HIPPO_RIPPLE_MESSAGE" | "$@" >/dev/null 2>&1 & '
    'else "$@" </dev/null >/dev/null 2>&1 & fi; echo $!'
)
NOBODY = "Nobody is at the keyboard: this is hippo's sleep cycle waking you, the main model."
NUDGE = "When you are done, call the nudge tool (or run `hippo nudge`) so the cycle goes on."
MESSAGES = {
    "brief_requested": (
        "It is past bedtime and no brief is open. Look at what the sessions since the last "
        "sleep did and submit a brief (submit_brief, or `hippo brief --summary ...`): what "
        "mattered, and hints on what to keep and what is noise."
    ),
    "draft_submitted": (
        "Draft {draft_id} waits for your review. Show it (review_show, or `hippo review "
        "{draft_id}`) and give each operation a verdict (review_decide): approve what the "
        'fragments support, deny the rest with a critique. Approve with "restate": false an '
        "attach that would reword its core, to keep the core's words."
    ),
    "tend_resubmitted": (
        "Draft {draft_id} is the redraft of what you denied, attempt {attempt}. Review it as "
        'before (review_show, review_decide); approve with "restate": false an attach that '
        "would reword its core."
    ),
    "tend_resubmitted_terminal": (
        "Draft {draft_id} is the last attempt of its chain: a denial now ends the chain, so "
        "land each operation you can, with your fixes (review_decide with edits), and deny "
        'only what must not be kept. Approve with "restate": false an attach that would '
        "reword its core."
    ),
    "brief_unmatched": (
        "The brief's promote hints matched no fragment, so the brief is parked. Write a new "
        "brief whose hints name topics the fragments have (submit_brief)."
    ),
    "brief_requested_failed": (
        "The last sleep failed ({failed}), so its brief is spent and nothing was lost: the "
        "fragments wait. Look at what went wrong (sleep_status, or `hippo sleep status`), "
        "then submit a fresh brief (submit_brief, or `hippo brief --summary ...`): what "
        "mattered, and hints on what to keep and what is noise."
    ),
    "sleep_failed": (
        "A sleep failed: {error}. Nothing was lost: the fragments wait for the next sleep, "
        "and the next brief request says so. Look at what went wrong (sleep_status, or "
        "`hippo sleep status`): a drafting model that is down, too slow, or answering "
        "something other than JSON."
    ),
}


def message(settings: SleepRipple, event: str, data: dict[str, Any]) -> str:
    """What the ripple says for ``event``: the operator's words as written, else hippo's,
    which start by saying nobody is at the keyboard and end by asking for the nudge."""
    key = event
    if event == "tend_resubmitted" and data.get("terminal"):
        key = f"{event}_terminal"
    elif event == "brief_requested" and data.get("failed"):
        key = f"{event}_failed"
    fields = {"draft_id": data.get("draft", ""), "attempt": data.get("attempt", ""), **data}
    own = settings.messages.get(key) or settings.messages.get(event)
    if own:
        return _filled(own, fields)
    return f"{NOBODY} {_filled(MESSAGES.get(key, MESSAGES.get(event, '')), fields)} {NUDGE}"


def _filled(text: str, fields: dict[str, Any]) -> str:
    for name, value in fields.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def heard(workspace: Workspace, settings: SleepSettings, event: Event) -> None:
    """Ripple for ``event`` if the settings ask for it."""
    if not event.name.startswith("sleep.") or "id" not in event.data:
        return
    name = event.name.removeprefix("sleep.")
    ripple = settings.ripple
    if not ripple.type or name not in ripple.events:
        return
    if name in HANDED_OVER and settings.model.lifecycle.handover:
        _hand_over(workspace)
    fire(workspace, settings, {"event": name, **event.data})


#: The events on which the drafting model's server makes room for the main model.
HANDED_OVER = ("draft_submitted", "tend_resubmitted")


def _hand_over(workspace: Workspace) -> None:
    """One model in memory at a time: stop the drafting model before waking the main one."""
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle
    from hippo_packs.sleep.model import lifecycle

    cycle = Cycle.open(workspace, load_plugins())
    if lifecycle.managed(cycle):
        lifecycle.stop_now(cycle, "handing over to the main model")


def fire(workspace: Workspace, settings: SleepSettings, record: dict[str, Any]) -> dict[str, Any]:
    """Ripple for one event now, or keep it for the next tick while the last ripple for the
    same event runs; what happened, as kept in ``ripples.jsonl``."""
    ripple, name = settings.ripple, record["event"]
    running = _running(workspace).get(name)
    if running is not None and process_alive(running["pid"]):
        outcome = {
            "ripple": "waiting",
            "why": f"the last {name} ripple (pid {running['pid']}) runs",
        }
        _keep_waiting(workspace, record)
    else:
        said = message(ripple, name, record)
        try:
            outcome = (
                _script(workspace, ripple, record, said)
                if ripple.type == "script"
                else (_endpoint(ripple, record, said))
            )
        except HippoError as exc:
            outcome = {"ripple": "refused", "error": str(exc)}
    result = {"id": record.get("id"), "event": name, **outcome, "at": store.iso(store.now())}
    store.append_record(workspace, "ripples.jsonl", result)
    return result


def _script(
    workspace: Workspace, ripple: SleepRipple, record: dict[str, Any], said: str
) -> dict[str, Any]:
    fields = {"message": "" if ripple.stdin else said, "event": record["event"]}
    fields["draft_id"] = str(record.get("draft", ""))
    argv = [_filled(arg, fields) for arg in ripple.command]
    if not argv:
        raise HippoError("[sleep.ripple] command is empty: give the program to run")
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        raise HippoError(f"[sleep.ripple] command: {argv[0]!r} is not on PATH")
    if os.name == "posix" and os.geteuid() == 0:
        argv = _as_account(ripple.run_as, argv)
    # A session of its own: none of the variables of an agent hippo may run under (a nudge
    # through an agent's tools) passes on, so the woken model is never taken for the session
    # that wrote what it reviews.
    env = {
        **without_agent(os.environ),
        "HIPPO_RIPPLE_EVENT": record["event"],
        "HIPPO_RIPPLE_MESSAGE": said,
        "HIPPO_RIPPLE_JSON": json.dumps(record, ensure_ascii=False, default=str),
        "HIPPO_RIPPLE_STDIN": "1" if ripple.stdin else "",
    }
    cwd = os.path.join(workspace.folder, ripple.cwd) if ripple.cwd else workspace.folder
    try:
        started = subprocess.run(
            ["sh", "-c", LAUNCH, "ripple", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        pid = int(started.stdout.strip())
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise HippoError(f"[sleep.ripple] command could not be started in {cwd} ({exc})") from None
    running = _running(workspace)
    running[record["event"]] = {"pid": pid, "started": store.now()}
    store.write(
        store.folder(workspace, "ripples.json"), {"running": running, **_waiting(workspace)}
    )
    return {"ripple": "started", "pid": pid}


def _as_account(account: str, argv: list[str]) -> list[str]:
    """``argv`` run as ``account``: a service running as root never runs it as root."""
    if not account:
        raise HippoError(
            "hippo runs as root, and a ripple runs only as another account: set run_as under "
            "[sleep.ripple] to the account the main model runs as"
        )
    if shutil.which("runuser"):
        return ["runuser", "-u", account, "--", *argv]
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={account}", f"--regid={account}", "--init-groups", *argv]
    raise HippoError("run_as needs runuser or setpriv (util-linux), and neither is installed")


def _endpoint(ripple: SleepRipple, record: dict[str, Any], said: str) -> dict[str, Any]:
    from hippo_packs.sleep.config import bearer_of, secret_of
    from hippo_packs.sleep.wake.notify import post_json

    if not ripple.url:
        raise HippoError("[sleep.ripple] type = endpoint needs url")
    token = bearer_of(ripple, "[sleep.ripple]")
    secret = secret_of(ripple, "[sleep.ripple]")
    body = {**record, "message": said}
    posted = post_json(
        ripple.url,
        body,
        token,
        min(ripple.timeout_seconds, 30),
        secret=secret,
        allow_link_local=ripple.allow_link_local,
    )
    if "error" in posted:
        return {"ripple": "failed", **posted, "error": f"the endpoint {posted['error']}"}
    return {"ripple": "posted", **posted}


def catch_up(workspace: Workspace, settings: SleepSettings) -> list[dict[str, Any]]:
    """At a tick: stop ripples past their time, and fire the ones kept while the last for
    their event ran."""
    running = _running(workspace)
    for name, held in list(running.items()):
        if not process_alive(held["pid"]):
            del running[name]
        elif store.now() - held["started"] > settings.ripple.timeout_seconds:
            with contextlib.suppress(OSError):
                os.kill(held["pid"], signal.SIGTERM)
            store.append_record(
                workspace,
                "ripples.jsonl",
                {"event": name, "ripple": "stopped", "pid": held["pid"], "why": "timeout_seconds"},
            )
            del running[name]
    waiting = _waiting(workspace)["waiting"]
    store.write(store.folder(workspace, "ripples.json"), {"running": running, "waiting": {}})
    return [fire(workspace, settings, record) for record in waiting.values()]


def _state(workspace: Workspace) -> dict[str, Any]:
    path = store.folder(workspace, "ripples.json")
    if not path.exists():
        return {}
    try:
        return store.read(path, workspace, "ripple state")
    except HippoError:
        return {}


def _running(workspace: Workspace) -> dict[str, Any]:
    found = _state(workspace).get("running")
    return dict(found) if isinstance(found, dict) else {}


def _waiting(workspace: Workspace) -> dict[str, Any]:
    found = _state(workspace).get("waiting")
    return {"waiting": dict(found) if isinstance(found, dict) else {}}


def _keep_waiting(workspace: Workspace, record: dict[str, Any]) -> None:
    waiting = _waiting(workspace)["waiting"]
    waiting[record["event"]] = record  # the newest of an event is the one worth sending
    store.write(
        store.folder(workspace, "ripples.json"),
        {"running": _running(workspace), "waiting": waiting},
    )


def for_claude(workspace: Workspace, folder: str) -> dict[str, Any]:
    """Write ``[sleep.ripple]`` for Claude Code: ``claude -p`` in ``folder`` with the tools of
    every MCP server Claude Code has for that folder allowed; what was written, and the
    servers found (a warning when hippo's is not among them)."""
    from hippo_core import load_plugins, update_settings

    where = os.path.abspath(os.path.expanduser(folder))
    if not os.path.isdir(where):
        raise HippoError(f"{folder}: no such folder; give the project Claude Code runs in")
    servers = sorted(_claude_servers(where))
    command = ["claude", "-p", "{message}"]
    if servers:
        command += ["--allowedTools", ",".join(f"mcp__{name}" for name in servers)]
    chosen = {"type": "script", "command": command, "cwd": where}
    update_settings(workspace, load_plugins(), {f"sleep.ripple.{k}": v for k, v in chosen.items()})
    path = workspace.settings_path
    found = {"written": workspace.relative(path), "command": command, "cwd": where}
    if "hippo" not in servers:
        found["warning"] = (
            f"Claude Code has no MCP server named hippo for {where}: the model it wakes cannot "
            "reach hippo's tools; run `hippo mcp install claude-code` there (or with --user)"
        )
    return {**found, "servers": servers}


def _claude_servers(folder: str) -> set[str]:
    """The MCP servers Claude Code starts in ``folder``: the user's, the folder's local ones
    (both in ``~/.claude.json``) and the project's ``.mcp.json``."""
    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~")
    found: set[str] = set()
    config = _json_file(os.path.join(home, ".claude.json"))
    found |= set(_object(config.get("mcpServers")))
    projects = _object(config.get("projects"))
    found |= set(_object(_object(projects.get(folder)).get("mcpServers")))
    found |= set(_object(_json_file(os.path.join(folder, ".mcp.json")).get("mcpServers")))
    return found


def _json_file(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
