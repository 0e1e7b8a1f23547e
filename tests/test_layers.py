"""The layers read top-down: in hippo_core and in hippo_packs no module imports one that
imports it back, every module imports on its own, the sleep pack's rooms import only the
rooms below them, and hippo's own packs import only hippo_core's public API."""

from __future__ import annotations

import ast
import functools
import itertools
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

import hippo_core

PACKAGE = Path(hippo_core.__file__).parent
ROOT = PACKAGE.parent
PACKS = ROOT / "hippo_packs"
#: Templates a new pack is made from, not hippo's code.
SKIP = PACKAGE / "packs" / "scaffold"

#: An import: the module imported, and where (``hippo_core/a.py:12``).
Edge = tuple[str, str]


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of a package (hippo_core) by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(SKIP):
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def resolve(name: str, known: dict[str, Path]) -> str:
    """The module ``name`` names, or the nearest package above it that exists."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` blocks (imports for annotations)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        named = isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        if named or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            assert isinstance(node, ast.If)
            found |= {id(inner) for part in node.body for inner in ast.walk(part)}
    return found


def imports_of(
    module: str,
    path: Path,
    known: dict[str, Path],
    prefix: str = "hippo_core",
    *,
    type_checking: bool = True,
) -> list[Edge]:
    """Every module of ``prefix`` that ``module`` imports anywhere: top level, functions,
    and (unless ``type_checking`` is False) TYPE_CHECKING blocks."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    found: list[Edge] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    annotations = set() if type_checking else type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = []
            for alias in node.names:
                child = f"{base}.{alias.name}"
                targets.append(child if child in known else base)
        else:
            continue
        for target in targets:
            if target == prefix or target.startswith(f"{prefix}."):
                found.append((resolve(target, known), f"{shown}:{node.lineno}"))
    return found


@functools.cache
def graph(package: Path = PACKAGE, *, type_checking: bool = True) -> dict[str, dict[str, str]]:
    """module -> {imported module: where}.

    Importing ``hippo_core.x`` is not counted as importing the package ``hippo_core`` (Python
    runs the package's ``__init__`` first, but that is no circle), so an ``__init__`` that
    imports its own children is never one by itself; a child that imports its parent
    package back (``import hippo_core``, ``from hippo_core import Workspace``) closes one.
    """
    known = modules(package)
    edges: dict[str, dict[str, str]] = {name: {} for name in known}
    for module, path in known.items():
        found = imports_of(module, path, known, package.name, type_checking=type_checking)
        for target, where in found:
            if target != module:
                edges[module].setdefault(target, where)
    return edges


def components(edges: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def shortest_cycle(start: str, group: set[str], edges: dict[str, dict[str, str]]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group``."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node]):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child in group and child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is in no cycle")


def describe(cycle: list[str], edges: dict[str, dict[str, str]]) -> str:
    where = ", ".join(edges[a][b] for a, b in itertools.pairwise(cycle))
    return f"{' -> '.join(cycle)}\n    ({where})"


FAKE = """
import os
import hippo_core.version
from hippo_core import jsontext, Workspace
from . import hot
from .. import errors
from ..notes.index import NotesIndex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.dream.model import Proposal


def later():
    from hippo_core.index import ingest as run_ingest
    from hippo_core.nowhere import thing

    class Inner:
        import hippo_core.budget as budget
"""


def test_the_graph_sees_every_import_in_a_file(tmp_path: Path) -> None:
    """Top level, functions, classes, TYPE_CHECKING; names and modules; relative imports."""
    path = tmp_path / "fake.py"
    path.write_text(FAKE, encoding="utf-8")
    known = modules()

    found = imports_of("hippo_core.cli.fake", path, known)

    assert [(target, int(where.rpartition(":")[2])) for target, where in found] == [
        ("hippo_core.version", 3),
        ("hippo_core.jsontext", 4),
        ("hippo_core", 4),  # Workspace is a name of the package, not a module
        ("hippo_core.cli.hot", 5),
        ("hippo_core.errors", 6),
        ("hippo_core.notes.index", 7),
        ("hippo_core.dream.model", 11),
        ("hippo_core.index.ingest", 15),
        ("hippo_core", 16),  # no such module: the nearest package that exists
        ("hippo_core.budget", 19),
    ]
    edges = graph()
    assert len(edges) > 100
    # The package imports its children (for type checkers); they do not import it back.
    assert {"hippo_core.version", "hippo_core.dream.model"} <= set(edges["hippo_core"])
    assert "hippo_core.jsontext" in edges["hippo_core.agent_hooks"]
    assert "hippo_core" not in edges["hippo_core.agent_hooks"]


def cycles_in(edges: dict[str, dict[str, str]]) -> list[list[str]]:
    """One shortest cycle through each module that is in one, each cycle once."""
    cycles: dict[tuple[str, ...], list[str]] = {}
    for group in components(edges):
        for start in group:
            cycle = shortest_cycle(start, set(group), edges)
            at = cycle.index(min(cycle[:-1]))
            key = tuple(cycle[at:-1] + cycle[:at])
            cycles.setdefault(key, [*key, key[0]])
    return list(cycles.values())


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {
        "p": {"p.a": "p:1", "p.b": "p:2"},  # a package importing its children
        "p.a": {"p.b": "a:1"},
        "p.b": {"q": "b:1"},
        "q": {"p.a": "q:1", "r": "q:2"},
        "r": {"p": "r:1"},  # ... and one of them importing the package back
        "s": {"s.t": "s:1"},
        "s.t": {},
    }
    assert cycles_in(edges) == [["p", "p.b", "q", "r", "p"], ["p.a", "p.b", "q", "p.a"]]
    assert describe(["q", "r", "p", "p.a", "p.b", "q"], edges) == (
        "q -> r -> p -> p.a -> p.b -> q\n    (q:2, r:1, p:1, a:1, b:1)"
    )
    del edges["r"]["p"]
    assert cycles_in(edges) == [["p.a", "p.b", "q", "p.a"]]
    del edges["q"]["p.a"]
    assert cycles_in(edges) == []


def test_no_import_cycles() -> None:
    edges = graph()
    cycles = cycles_in(edges)
    shown = "\n".join(describe(cycle, edges) for cycle in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s) in hippo_core:\n{shown}"


IMPORT_ALL = """
import importlib
import sys

failures = []
for name in sys.argv[1:]:
    # Each module as if first: none of hippo's modules imported yet.
    for loaded in [m for m in sys.modules if m.startswith(("hippo_core", "hippo_packs"))]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except BaseException as exc:
        line = f"{name}: {type(exc).__name__}: {exc}"
        missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        if missing and not missing.startswith("hippo_core"):
            line += f" (third-party {missing!r} is not installed: an optional extra?)"
        failures.append(line)
print("\\n".join(failures))
"""


@pytest.mark.parametrize("package", [PACKAGE, PACKS], ids=["hippo_core", "hippo_packs"])
def test_every_module_imports_on_its_own(package: Path) -> None:
    """A module whose top-level code fails (a name imported only for type checkers, say)."""
    # `python -m hippo_core` runs the command line: importing __main__ is running it.
    names = sorted(name for name in modules(package) if name.rpartition(".")[2] != "__main__")
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, *names],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    failures = result.stdout.strip()
    assert not failures, f"modules that fail to import:\n{failures}"


# -- hippo's own packs --------------------------------------------------------------------


def test_no_import_cycles_in_the_packs() -> None:
    """Lazy imports count; TYPE_CHECKING ones (annotations only) do not."""
    edges = graph(PACKS, type_checking=False)
    cycles = cycles_in(edges)
    shown = "\n".join(describe(cycle, edges) for cycle in cycles)
    assert not cycles, f"{len(cycles)} import cycle(s) in hippo_packs:\n{shown}"


#: The sleep pack's rooms, bottom up: a room imports only itself and the rooms below it.
#: ``hooks`` and ``actions`` stand side by side and import neither the other.
ROOMS = {
    "config": 0,
    "records": 1,
    "model": 2,
    "cycle": 3,
    "wake": 4,
    "hooks": 5,
    "actions": 5,
    "service": 6,
    "commands": 7,
    "plugin": 8,
}
SLEEP = "hippo_packs.sleep"


def room_of(module: str) -> str:
    """The room of a module of the sleep pack (``hippo_packs.sleep.cycle.tick``: cycle)."""
    assert module.startswith(f"{SLEEP}."), module
    return module.removeprefix(f"{SLEEP}.").split(".", 1)[0]


def test_the_sleep_packs_rooms_import_only_downwards() -> None:
    """Every import counts here, lazy and TYPE_CHECKING alike: a room that needs a type
    from above it takes a protocol of its own (``model.lifecycle.Host``)."""
    edges = graph(PACKS)
    wrong = []
    for module, imported in edges.items():
        if not module.startswith(f"{SLEEP}."):
            continue
        mine = room_of(module)
        assert mine in ROOMS, f"{module}: a room the layer rule does not know; add it to ROOMS"
        for target, where in imported.items():
            if not target.startswith(f"{SLEEP}."):
                continue
            theirs = room_of(target)
            if theirs != mine and ROOMS[theirs] >= ROOMS[mine]:
                wrong.append(f"{where}: {mine} imports {theirs} ({target})")
    assert not wrong, "imports that go up or sideways:\n" + "\n".join(sorted(wrong))


def private_imports(path: Path, shown: str = "") -> list[str]:
    """Each import in ``path`` of a hippo_core name outside the public API, as a line naming
    the file, the name and what to use instead. Lazy and TYPE_CHECKING imports included."""
    public = set(hippo_core.__all__)
    homes: dict[str, list[str]] = {}
    for name, module in hippo_core._MODULE_OF.items():
        homes.setdefault(module, []).append(name)
    shown = shown or path.relative_to(ROOT).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("hippo_core."):
                    found.append(
                        f"{shown}:{node.lineno}: import {alias.name}: {_instead(alias.name, homes)}"
                    )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hippo_core"):
            for alias in node.names:
                if node.module == "hippo_core" and alias.name in public:
                    continue
                where = f"{shown}:{node.lineno}: {alias.name} from {node.module}"
                found.append(f"{where}: {_alternative(node.module or '', alias.name, homes)}")
    return found


def _alternative(module: str, name: str, homes: dict[str, list[str]]) -> str:
    """What a pack should import instead of ``name`` from ``module``."""
    import importlib

    if module == "hippo_core":
        return f"{name} is not in hippo_core's public API (docs/plugins.md lists it)"
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        value = None
    same = [p for p in hippo_core.__all__ if value is not None and getattr(hippo_core, p) is value]
    if same:
        return f"use `from hippo_core import {same[0]}`"
    return _instead(f"{module}.{name}", homes)


def _instead(dotted: str, homes: dict[str, list[str]]) -> str:
    names = homes.get(dotted)
    if names:
        return f"{dotted} is private; its public names are {', '.join(sorted(names))}"
    return (
        f"{dotted} is private and has no public name: ask for one in hippo_core's API "
        "(docs/plugins.md) or keep the logic in the pack"
    )


def test_hippos_own_packs_import_only_the_public_api() -> None:
    found = [line for path in sorted(PACKS.rglob("*.py")) for line in private_imports(path)]
    assert not found, "private hippo_core names in hippo_packs:\n" + "\n".join(found)


def test_a_private_import_is_named_with_its_public_alternative(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(
        "from hippo_core import Workspace, hookimpl\n"
        "from hippo_core.processes import process_alive\n"
        "def later():\n"
        "    from hippo_core.dream import receipts\n"
        "    import hippo_core.nowhere\n"
        "    from hippo_core import _HOMES\n",
        encoding="utf-8",
    )
    found = private_imports(fake, "hippo_packs/sleep/_fake_for_test.py")
    assert found == [
        "hippo_packs/sleep/_fake_for_test.py:2: process_alive from hippo_core.processes: "
        "use `from hippo_core import process_alive`",
        "hippo_packs/sleep/_fake_for_test.py:4: receipts from hippo_core.dream: "
        "hippo_core.dream.receipts is private; its public names are new_id, proposal_record, "
        "purge_note_history, receipt_record, record_proposal",
        "hippo_packs/sleep/_fake_for_test.py:5: import hippo_core.nowhere: "
        "hippo_core.nowhere is private and has no public name: ask for one in "
        "hippo_core's API (docs/plugins.md) or keep the logic in the pack",
        "hippo_packs/sleep/_fake_for_test.py:6: _HOMES from hippo_core: _HOMES is not in "
        "hippo_core's public API (docs/plugins.md lists it)",
    ]
