"""Reading a chapter as its tests follow it: the fenced blocks, the commands of a
```` ```console ```` block with what each prints, and whether a command printed it.

The convention every checked chapter keeps:

- A ```` ```console ```` block holds commands, each on a line starting with ``$ ``, each
  followed by what it prints (stdout and stderr, as a terminal shows them). A line ``...``
  stands for any number of lines, and ``...`` inside a line for any text.
- A block whose info string ends in ``file=PATH`` is a file the reader writes: its text
  becomes the whole of PATH, relative to the current folder.

Each test says which other kinds of block its chapter may hold, and what it does with them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    line: int
    """Where the step is in its page (1-based)."""
    command: str = ""
    output: tuple[str, ...] = ()
    compared: bool = True
    """False for a ```sh line: only its exit status counts."""
    path: str = ""
    """A file the reader writes (then ``output`` is its text)."""


def blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """Each fenced block: the number of its opening line, its info string and its lines."""
    found, lines, number = [], text.splitlines(), 0
    while number < len(lines):
        if lines[number].startswith("```"):
            info, start = lines[number][3:].strip(), number + 1
            number = start
            while not lines[number].startswith("```"):
                number += 1
            found.append((start, info, lines[start:number]))
        number += 1
    return found


def console(body: list[str], first: int, page: str) -> list[Step]:
    """The commands of a console block whose first line is line ``first`` of ``page``."""
    commands: list[Step] = []
    for offset, line in enumerate(body):
        if line.startswith("$ "):
            commands.append(Step(first + offset, command=line[2:]))
        elif not commands:
            raise AssertionError(f"{page}:{first + offset}: output before any command")
        else:
            last = commands[-1]
            commands[-1] = Step(last.line, last.command, (*last.output, line))
    return commands


def steps(text: str, page: str, first: int = 1, sh: bool = False) -> list[Step]:
    """The commands and files of ``text`` (a page, or a part of one starting at its line
    ``first``) in order; ``sh`` lets ```sh blocks in, each line a command whose output is not
    compared. Any other block is an error naming it."""
    found: list[Step] = []
    for start, info, body in blocks(text):
        where = start + first
        target = re.search(r"(?:^|\s)file=(\S+)$", info)
        if target:
            found.append(Step(where, path=target.group(1), output=tuple(body)))
        elif info == "console":
            found += console(body, where, page)
        elif info == "sh" and sh:
            found += [
                Step(where + n, command=line, compared=False)
                for n, line in enumerate(body)
                if line.strip()
            ]
        else:
            raise AssertionError(
                f"{page}:{where - 1}: a ```{info} block is neither run nor written by its "
                "test; show a command's output or a file the reader writes"
            )
    return found


def matches(expected: tuple[str, ...], actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, ``...`` standing for what varies."""
    pattern = ""
    for line in expected:
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += r"[^\n]*?".join(map(re.escape, line.rstrip().split("..."))) + r"\n"
    shown = "".join(line.rstrip() + "\n" for line in actual.splitlines())
    return re.fullmatch(pattern, shown) is not None
