"""What a shell command or a patch says about files and fetches, for agents that work
through a shell.

Codex reads files with ``cat`` and edits them with ``apply_patch``; other agents' shell
tools run the same commands, and fetch pages with ``curl`` or GitHub's issues with ``gh``.
Reading files and fetches off a command line is a heuristic, and says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from hippo_core.base.patterns import Lazy
from hippo_core.transcripts.build import resolve
from hippo_core.transcripts.external import fetched, web

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PATCH_HEADER = Lazy(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$", re.M)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_READERS = frozenset({"cat", "head", "tail", "sed", "nl", "less", "more", "bat"})
#: Options that take a value, per reading program.
_VALUED = {"head": ("-n", "-c"), "tail": ("-n", "-c"), "sed": ("-e", "-f"), "nl": ("-b", "-w")}
_SEPARATORS = frozenset({"&&", "||", "|", ";", "&", "(", ")"})
#: Programs that fetch what a URL names, and the GitHub CLI's commands that read issues,
#: pull requests, releases and the like.
_FETCHERS = frozenset({"curl", "wget", "http", "https", "xh", "lynx", "w3m", "links"})
_GH_READS = frozenset({"api", "issue", "pr", "release", "gist", "repo", "search", "run"})
_MAYBE_FETCH = Lazy(r"(?<![\w.-])(?:curl|wget|https?|xh|lynx|w3m|links|gh)(?![\w.-])")
_URL_WORD = Lazy(r"(?:https?|ftp)://\S+")


def command_text(value: Any) -> str:
    """The shell text of a command: a string, or an argv (``["bash", "-lc", "..."]``)."""
    if isinstance(value, str):
        return value
    if not value or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ""
    if len(value) >= 3 and os.path.basename(value[0]) in _SHELLS and value[-2].endswith("c"):
        return str(value[-1])
    if value[0] == "apply_patch" and len(value) == 2:
        return str(value[1])  # older Codex ran apply_patch as a command, the patch as argv
    import shlex

    return shlex.join(value)


def patched_files(patch: str, workdir: str | None) -> list[str]:
    """Files an apply_patch text adds, updates, deletes or moves to."""
    if "*** " not in patch:
        return []
    return [resolve(m.group(1), workdir) for m in _PATCH_HEADER.finditer(patch)]


def _segments(command: str) -> list[list[str]]:
    """The simple commands of a command line, as words (a heredoc's body left out)."""
    try:
        import shlex

        lexer = shlex.shlex(command.split("<<", 1)[0], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return []
    found: list[list[str]] = []
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            segment.append(word)
        elif segment:
            found.append(segment)
            segment = []
    return found


def fetches(command: str) -> list[str]:
    """What a shell command fetches from outside, described (``web: curl https://...``,
    ``web: gh issue view 12``): ``curl``, ``wget``, HTTPie, ``xh`` and text browsers with
    the URLs they name, and the GitHub CLI's reading commands. A heuristic, like
    :func:`files_read`."""
    if _MAYBE_FETCH.search(command) is None:
        return []
    found: list[str] = []
    for segment in _segments(command):
        program = os.path.basename(segment[0])
        if program in _FETCHERS:
            urls = [w for w in segment[1:] if _URL_WORD.match(w)]
            found.extend(fetched(program, url) for url in urls or [""])
        elif program == "gh" and len(segment) > 1 and segment[1] in _GH_READS:
            words = [w for w in segment[1:] if not w.startswith("-")][:3]
            found.append(web("gh", " ".join(words)))
    return found


def files_read(command: str) -> list[str]:
    """Files a shell command prints with ``cat``/``head``/``tail``/``sed``/``nl``/``less``.

    A heuristic: options are dropped with their values (``head -n 5``, ``sed -e s``), so are
    sed's script, redirections, numbers and words with globs or variables. A heredoc and
    ``sed -i`` (an edit) are not reads; a ``cd`` before the command is not followed.
    """
    found: list[str] = []
    for segment in _segments(command):
        program = os.path.basename(segment[0])
        in_place = program == "sed" and any(w.startswith("-i") for w in segment)
        if program in _READERS and not in_place:
            found.extend(_operands(program, segment[1:]))
    return found


def _operands(program: str, words: list[str]) -> Iterator[str]:
    valued = _VALUED.get(program, ())
    script_seen = program != "sed" or "-e" in words
    args = iter(words)
    for word in args:
        if word in valued or word in (">", ">>", "<", ">&"):
            next(args, None)
        elif word.startswith("-") or word.isdigit() or any(c in word for c in "*?$`{"):
            continue
        elif not script_seen:
            script_seen = True
        else:
            yield word
