"""The sleep pack's commands: ``remember``, ``brief``, ``forget``, ``nudge`` and ``sleep``.

They are registered through ``hippo_register_commands`` like any plugin's and imported only
when one of them runs. Each is thin: it reads its arguments, calls the cycle, prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from hippo_core import (
    JSON_OPTION,
    HippoError,
    UsageError,
    command_group,
    current_workspace,
    print_json,
    printable,
    subcommand,
)

if TYPE_CHECKING:
    from hippo_packs.sleep.cycle import Cycle


def _echo(line: str, err: bool = False) -> None:
    # Fragments, cores, events and errors hold what agents and models wrote: no control
    # character of theirs reaches the terminal.
    typer.echo(printable(line), err=err)


def _cycle() -> Cycle:
    from hippo_core import load_plugins
    from hippo_packs.sleep.cycle import Cycle

    cycle = Cycle.open(current_workspace(), load_plugins())
    for line in cycle.warnings:
        _echo(line, err=True)
    return cycle


# -- remember -----------------------------------------------------------------------------


def remember(
    text: list[str] = typer.Argument(
        ..., metavar="TEXT", help="What to keep, in your words; `list` lists the fragments."
    ),
    topic: str = typer.Option("", "--topic", metavar="T", help="Its topic (tags: a, b)."),
    verbatim: bool = typer.Option(
        False, "--verbatim", help="Keep it word for word: it becomes a core as written."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Keep a short-term fragment for the next sleep, or list them.

    `hippo remember list` lists the fragments waiting, newest first.
    """
    from hippo_packs.sleep import actions

    cycle = _cycle()
    if text == ["list"]:
        if topic or verbatim:
            raise UsageError("`hippo remember list` takes only --json")
        found = actions.waiting_fragments(cycle)
        if as_json:
            print_json(found)
            return
        for fragment in found:
            tag = f" [{fragment['topic']}]" if fragment.get("topic") else ""
            held_by = (
                f" (in draft {fragment['held_by_draft']})" if fragment["held_by_draft"] else ""
            )
            mark = " (verbatim)" if fragment.get("verbatim") else ""
            _echo(f"{fragment['id']}{tag}{mark}{held_by}  {fragment['content']}")
        if not found:
            _echo("no fragment is waiting for a sleep", err=True)
        return
    result = actions.remember(cycle, " ".join(text), topic=topic, verbatim=verbatim)
    if as_json:
        print_json(result)
        return
    _echo(f"remembered {result['id']}")


# -- brief --------------------------------------------------------------------------------


def brief(
    summary: str = typer.Option(..., "--summary", metavar="TEXT", help="What mattered."),
    promote: list[str] = typer.Option(
        [], "--promote", metavar="H", help="A topic worth keeping even from one fragment."
    ),
    noise: list[str] = typer.Option(
        [], "--noise", metavar="H", help="A topic that should never become a core."
    ),
    completed: list[str] = typer.Option(
        [], "--completed-intent", metavar="I", help="An open loop that is done now."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Write the brief that steers the next sleep: what mattered, and hints."""
    from hippo_packs.sleep import actions

    result = actions.brief(_cycle(), summary, promote=promote, noise=noise, completed=completed)
    if as_json:
        print_json(result)
        return
    _echo(f"brief {result['id']} is open: the next tick sleeps on it (`hippo nudge` now)")


# -- forget -------------------------------------------------------------------------------


def forget(
    core: str = typer.Argument(..., metavar="CORE", help="A core's id or its note's path."),
    reason: str = typer.Option(
        "", "--reason", metavar="R", help="Why it must go; forget refuses to run without it."
    ),
    now: bool = typer.Option(False, "--now", help="Purge it at once instead of at the next tick."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Flag a core to be purged at the next tick (or now), with a reason.

    The purge leaves a tombstone: the id, the reason, the time and what went with it.
    """
    from hippo_packs.sleep import actions

    result = actions.forget(_cycle(), core, reason=reason, now=now)
    if as_json:
        print_json(result)
    elif result.get("already"):
        from hippo_packs.sleep.records import store

        stone = result["tombstone"]
        when = store.iso(float(stone.get("purged_at") or 0))
        _echo(f"already forgotten: tombstone {stone['id']}, purged {when}; nothing to do")
    elif now:
        stone = result["tombstone"]["id"]
        _echo(f"purged {stone}; tombstone .hippo/sleep/tombstones/{stone}.json")
    else:
        _echo(f"flagged {result['flagged']}: it is purged at the next tick (`hippo sleep tick`)")


# -- nudge --------------------------------------------------------------------------------


def nudge(as_json: bool = JSON_OPTION) -> None:
    """Run one tick of the sleep cycle now: your turn is done.

    It redrafts what was denied whatever the clock says, once.
    """
    from hippo_packs.sleep import actions

    done = actions.nudge(_cycle())
    print_json(done) if as_json else _print_tick(done)
    _exit_if_failed(actions.failures(done))


# -- voice --------------------------------------------------------------------------------

voice_app = command_group(
    "The voice card: who these memories belong to, first in every draft prompt."
)


@subcommand(voice_app, "show")
def voice_show(as_json: bool = JSON_OPTION) -> None:
    """Print the voice card in use, with its version."""
    from hippo_packs.sleep.cycle import voice

    found = voice.show(_cycle())
    if as_json:
        print_json(found)
    elif not found["ok"]:
        raise HippoError(found["error"])
    elif found["text"] is None:
        _echo("no voice card yet: set one with `hippo voice set TEXT --why WHY`")
    else:
        _echo(f"version {found['version']}\n\n{found['text']}")


@subcommand(voice_app, "set")
def voice_set(
    text: str = typer.Argument(..., metavar="TEXT", help="The card, at most voice.max_chars."),
    why: str = typer.Option(
        "", "--why", metavar="TEXT", help="Why it changed (kept with the version)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Set the voice card: a new version, unless the text is the card already."""
    from hippo_packs.sleep.cycle import voice

    found = voice.set_card(_cycle(), text, why)
    if as_json:
        print_json(found)
    elif found["changed"]:
        _echo(f"voice card version {found['version']}")
    else:
        _echo(f"unchanged: that is version {found['version']} already")


@subcommand(voice_app, "history")
def voice_history(as_json: bool = JSON_OPTION) -> None:
    """Every kept version of the card, newest first, with why it changed."""
    from hippo_packs.sleep.cycle import voice

    found = voice.history(_cycle())
    if as_json:
        print_json({"versions": found})
        return
    for version in found:
        why = version["why"] or "(no reason given)"
        _echo(f"{version['version']}  {version['at']}  {why}")


# -- sleep --------------------------------------------------------------------------------

app = command_group("Run the sleep cycle: ticks, sleeps, tends, and what they did.")


@app.command("tick")
def tick_command(as_json: bool = JSON_OPTION) -> None:
    """Run one tick: tend (close what landed, redraft what was denied), then check."""
    from hippo_packs.sleep import actions

    done = actions.tick(_cycle())
    print_json(done) if as_json else _print_tick(done)
    _exit_if_failed(actions.failures(done))


@app.command("now")
def now_command(
    without_brief: bool = typer.Option(
        False, "--without-brief", help="Draft unsteered now instead of asking for a brief."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Sleep now on the open brief; with none, ask for one first (or --without-brief)."""
    from hippo_packs.sleep import actions

    result = actions.sleep_now(_cycle(), without_brief=without_brief)
    if as_json:
        print_json(result)
    elif not result["ok"]:
        _echo(result["error"], err=True)
    elif result["asked_for_brief"]:
        _echo(
            "asked for a brief: write one with `hippo brief --summary TEXT`, then "
            "`hippo nudge` (or `hippo sleep now --without-brief`)"
        )
    else:
        _echo(_sleep_line(result["sleep"]))
    if not result["ok"]:
        raise typer.Exit(1)
    _exit_if_failed(actions.failures({"check": {"slept": result.get("sleep")}}))


@app.command("tend")
def tend_command(as_json: bool = JSON_OPTION) -> None:
    """Redraft what was denied now, and close the chains that are done."""
    from hippo_packs.sleep import actions

    done = actions.tend_now(_cycle())
    print_json(done) if as_json else _print_tend(done)
    _exit_if_failed(actions.failures({"tend": done}))


@app.command("check")
def check_command(as_json: bool = JSON_OPTION) -> None:
    """Purge what was flagged, take the handoffs, and sleep on an open brief (no chain)."""
    from hippo_packs.sleep import actions

    done = actions.check_now(_cycle())
    print_json(done) if as_json else _print_check(done)
    _exit_if_failed(actions.failures({"check": done}))


@app.command("serve")
def serve_command(
    host: str | None = typer.Option(
        None,
        "--host",
        metavar="HOST",
        help="Listen here instead of [sleep.serve] host (127.0.0.1).",
    ),
    port: int | None = typer.Option(
        None, "--port", min=0, max=65535, help="Listen on this port instead (0: any free one)."
    ),
) -> None:
    """Run the cycle as a service: ticks on its own, and the HTTP routes (needs [serve])."""
    from hippo_packs.sleep.service import serve

    code = serve(str(current_workspace().root), host=host, port=port, say=lambda line: _echo(line))
    raise typer.Exit(code)


@subcommand(app, "ripple-claude")
def ripple_claude_command(
    folder: str = typer.Argument(..., metavar="FOLDER", help="The project Claude Code runs in."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Write [sleep.ripple] to wake Claude Code in FOLDER, its MCP servers' tools allowed."""
    from hippo_packs.sleep.wake.ripple import for_claude

    found = for_claude(current_workspace(), folder)
    if as_json:
        print_json(found)
        return
    _echo(f"wrote [sleep.ripple] in {found['written']}: {' '.join(found['command'])}")
    _echo(f"  in {found['cwd']}")
    if "warning" in found:
        _echo(f"warning: {found['warning']}", err=True)


@app.command("status")
def status_command(as_json: bool = JSON_OPTION) -> None:
    """Say what the cycle is doing: bedtime, the brief, the open chain, the last sleep."""
    from hippo_packs.sleep.actions.status import status

    found = status(_cycle())
    print_json(found) if as_json else _echo(found["say"])


@app.command("events")
def events_command(
    limit: int = typer.Option(50, "--limit", min=1, help="How many, newest first."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List the cycle's events, newest first."""
    from hippo_packs.sleep.records import store

    found = list(reversed(store.events(_cycle().workspace)))[:limit]
    if as_json:
        print_json(found)
        return
    for event in found:
        rest = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("event", "at"))
        _echo(f"{event.get('at')}  {event.get('event')}  {rest}".rstrip())


@app.command("history")
def history_command(as_json: bool = JSON_OPTION) -> None:
    """List the sleeps that ran, newest first, with what each did."""
    from hippo_packs.sleep.actions.status import history

    found = history(_cycle())
    if as_json:
        print_json(found)
        return
    for record in found:
        _echo(_sleep_line(record))


@app.command("audit")
def audit_command(
    limit: int = typer.Option(20, "--limit", min=1, help="How many chains, newest first."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Every chain's outcome and each drafting model's rates."""
    from hippo_packs.sleep.actions.status import audit

    found = audit(_cycle(), limit)
    if as_json:
        print_json(found)
        return
    for chain in found["chains"]:
        by = chain["approved_by"]
        who = f" (by a person {by['person']}, by an agent {by['agent']})" if chain["landed"] else ""
        _echo(
            f"{chain['cluster_id']}  {chain['outcome']}  landed {chain['landed']}{who}, "
            f"{len(chain['attempts'])} attempt(s)"
        )
        for name in by["who"]:
            _echo(f"  approved by {name}")
    for row in found["models"]:
        _echo(
            f"model {row['model']}: first pass {_shown(row['first_pass_rate'])}, mean attempts "
            f"{_shown(row['mean_attempts'])}, repeat rate {_shown(row['repeat_rate'])}"
        )
    fates = found["fragments"]
    early = fates["aged_early"]
    _echo(
        "fragments: "
        + ", ".join(f"{n} {state}" for state, n in fates["counts"].items())
        + f"; {len(fates['lost'])} lost"
        + (f"; {len(early)} aged out before the catch-up sleep" if early else "")
    )
    for fragment in fates["lost"]:
        _echo(
            f"LOST: fragment {fragment['id']} is in no state (last: {fragment['last']}); "
            "this is a bug of hippo's: please report it",
            err=True,
        )
    for fragment in early:
        when = (
            f"{fragment['days_after']} days after the last sleep"
            if fragment["last_sleep"]
            else "before any sleep"
        )
        where = (
            f"Its words are in {fragment['kept_in']}: `hippo remember` them again to keep them"
            if fragment["kept_in"]
            else "Its words are gone: the pruned archive was swept"
        )
        _echo(
            f"AGED OUT EARLY: fragment {fragment['id']} aged out at {fragment['at']}, {when}, "
            f"before a catch-up sleep had drafted from it; this is a bug of hippo's. {where}",
            err=True,
        )


@app.command("cores")
def cores_command(as_json: bool = JSON_OPTION) -> None:
    """List the long-term cores, with their evidence."""
    from hippo_packs.sleep.records.cores import all_cores

    cycle = _cycle()
    found = all_cores(cycle.workspace, cycle.cores_dir)
    if as_json:
        print_json(
            [
                {
                    "id": c.id,
                    "path": c.path,
                    "topic": c.topic,
                    "evidence_count": c.evidence_count,
                    "superseded_by": c.superseded_by or None,
                    "text": c.text,
                    "satellites": c.satellites,
                }
                for c in found
            ]
        )
        return
    for core in found:
        gone = f" (superseded by {core.superseded_by})" if core.superseded_by else ""
        _echo(f"{core.id}  evidence {core.evidence_count}{gone}  {core.title}")
    if not found:
        _echo("no core yet", err=True)


def _exit_if_failed(failures: list[str]) -> None:
    """What the command ran failed: each failure on stderr, and exit 1 (``--json`` has
    printed the record first)."""
    for line in failures:
        _echo(f"error: {line}", err=True)
    if failures:
        raise typer.Exit(1)


def _sleep_line(record: dict[str, Any]) -> str:
    line = f"{record.get('at')}  {record.get('outcome')}"
    if record.get("draft"):
        line += f": draft {record['draft']} with {record.get('operations')} operation(s); "
        line += f"review it with `hippo review {record['draft']}`"
    if record.get("counted"):
        line += "; " if record.get("draft") else ": "
        line += f"{record['counted']} fragment(s) in a core's own words, counted as its evidence"
    if record.get("error"):
        line += f": {record['error']}"
    if record.get("answer"):
        line += f"; the answer began {record['answer']!r}"
    if record.get("cut_off"):
        line += f" ({record['cut_off']} answer(s) cut off)"
    return line


def _print_tend(done: dict[str, Any], *, alone: bool = True) -> None:
    """What a tend did; by itself (``hippo sleep tend``), a line when it had nothing to do."""
    if alone and not any(done.get(key) for key in ("closed", "resubmitted", "deferred")):
        _echo("nothing to tend: no denied operation to redraft, no finished chain to close")
    for draft in done.get("closed", []):
        _echo(f"closed {draft}")
    for draft in done.get("resubmitted", []):
        _echo(f"redrafted: {draft}; review it with `hippo review {draft}`")
    if done.get("deferred"):
        _echo(f"redrafts deferred: {', '.join(done['deferred'])}")


def _shown(rate: float | None) -> str:
    """A rate with nothing to divide by is ``-``, as hippo eval prints it."""
    return "-" if rate is None else str(rate)


def _print_tick(done: dict[str, Any]) -> None:
    _print_tend(done["tend"], alone=False)
    _print_check(done["check"])


def _print_check(checked: dict[str, Any]) -> None:
    for core in checked.get("purged", []):
        _echo(f"purged {core}")
    if checked.get("slept"):
        _echo(_sleep_line(checked["slept"]))
    elif checked.get("asked_for_brief"):
        _echo("asked for a brief: `hippo brief --summary TEXT`, then `hippo nudge`")
    elif checked.get("waiting"):
        _echo(checked["waiting"])
    elif not checked.get("brief"):
        _echo("no brief open: nothing to sleep on")
