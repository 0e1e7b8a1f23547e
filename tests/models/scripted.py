"""A scripted model program for tests: ``scripted.py SCRIPT [--system-file PATH]``.

SCRIPT is a JSON file ``{"rules": [...]}``. The program reads the prompt from stdin and,
with ``--system-file``, the system prompt from that file, then answers with the first rule
whose every ``when`` substring occurs in system prompt + prompt (no ``when``: any prompt)
and whose ``repeat`` count is not used up. A rule's keys, all optional::

    when         substrings that must all occur            []
    reply        text printed to stdout, exactly           ""
    reply_bytes  print that many bytes of "x" instead      0
    stderr       text written to stderr                    ""
    sleep        seconds to wait before answering          0
    exit         exit status                               0
    repeat       how many calls the rule may answer        1000000
    append_to    [path, text]: append text to a file first  (a person editing a note
                 while the model thinks)
    delete       a file to delete first                    (a person removing a note)

No rule matching: "scripted model: no rule matches" on stderr, exit status 3.

Beside SCRIPT (``model.json``): ``model.state.json`` counts each rule's uses, and every
call appends one line ``{"argv", "system", "prompt", "rule"}`` to ``model.calls.jsonl``
(``argv`` is this program's whole ``sys.argv``, ``rule`` the index answering or null).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_REPEAT = 1_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description="A scripted model for hippo's tests.")
    parser.add_argument("script", type=Path)
    parser.add_argument("--system-file", type=Path)
    args = parser.parse_args()
    prompt = sys.stdin.buffer.read().decode("utf-8")
    system = args.system_file.read_text(encoding="utf-8") if args.system_file else None
    rules: list[dict[str, Any]] = json.loads(args.script.read_text(encoding="utf-8"))["rules"]

    with _locked(args.script):
        index = _choose(args.script, rules, (system or "") + "\n" + prompt)
        record = {"argv": sys.argv, "system": system, "prompt": prompt, "rule": index}
        with args.script.with_suffix(".calls.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")

    if index is None:
        sys.stderr.write("scripted model: no rule matches\n")
        return 3
    rule = rules[index]
    if rule.get("append_to"):
        target, text = rule["append_to"]
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    if rule.get("delete"):
        Path(rule["delete"]).unlink()
    time.sleep(rule.get("sleep", 0))
    sys.stderr.write(rule.get("stderr", ""))
    sys.stderr.flush()
    try:
        _answer(rule)
    except BrokenPipeError:
        return 1  # the reader stopped reading (a reply it found too large)
    return int(rule.get("exit", 0))


def _choose(script: Path, rules: list[dict[str, Any]], text: str) -> int | None:
    """The first rule that matches and is not used up; its use is counted."""
    state_path = script.with_suffix(".state.json")
    uses: dict[str, int] = (
        json.loads(state_path.read_text(encoding="utf-8")) if state_path.exists() else {}
    )
    for index, rule in enumerate(rules):
        if not all(part in text for part in rule.get("when") or ()):
            continue
        if uses.get(str(index), 0) >= rule.get("repeat", DEFAULT_REPEAT):
            continue
        uses[str(index)] = uses.get(str(index), 0) + 1
        state_path.write_text(json.dumps(uses), encoding="utf-8")
        return index
    return None


def _answer(rule: dict[str, Any]) -> None:
    out = sys.stdout.buffer
    remaining = int(rule.get("reply_bytes", 0))
    if remaining <= 0:
        out.write(rule.get("reply", "").encode("utf-8"))
    block = b"x" * (1024 * 1024)
    while remaining > 0:
        out.write(block[:remaining])
        remaining -= len(block)
    out.flush()


@contextlib.contextmanager
def _locked(script: Path) -> Any:
    """Hold a lock beside the script, so that calls made at once count uses correctly."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: calls in parallel may share a rule's last use
        yield
        return
    with script.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


if __name__ == "__main__":
    sys.exit(main())
