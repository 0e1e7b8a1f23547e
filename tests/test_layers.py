"""The layers read top-down: in hippo_core and in hippo_packs no module imports one that
imports it back, hippo_core's rooms and the sleep pack's import only the rooms below them,
every module imports on its own, and hippo's own packs import only hippo_core's public
API."""

from __future__ import annotations

import ast
import functools
import itertools
import re
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
from hippo_core import version, Workspace
from . import hot
from ..base import errors
from ..notes.index import NotesIndex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.dream.model import Proposal


def later():
    from hippo_core.index import ingest as run_ingest
    from hippo_core.nowhere import thing

    class Inner:
        import hippo_core.context.budget as budget
"""


def test_the_graph_sees_every_import_in_a_file(tmp_path: Path) -> None:
    """Top level, functions, classes, TYPE_CHECKING; names and modules; relative imports."""
    path = tmp_path / "fake.py"
    path.write_text(FAKE, encoding="utf-8")
    known = modules()

    found = imports_of("hippo_core.cli.fake", path, known)

    assert [(target, int(where.rpartition(":")[2])) for target, where in found] == [
        ("hippo_core.version", 3),
        ("hippo_core.version", 4),
        ("hippo_core", 4),  # Workspace is a name of the package, not a module
        ("hippo_core.cli.hot", 5),
        ("hippo_core.base.errors", 6),
        ("hippo_core.notes.index", 7),
        ("hippo_core.dream.model", 11),
        ("hippo_core.index.ingest", 15),
        ("hippo_core", 16),  # no such module: the nearest package that exists
        ("hippo_core.context.budget", 19),
    ]
    edges = graph()
    assert len(edges) > 100
    # The package imports its children (for type checkers); they do not import it back.
    assert {"hippo_core.version", "hippo_core.dream.model"} <= set(edges["hippo_core"])
    assert "hippo_core.files.jsontext" in edges["hippo_core.actions.hook"]
    assert "hippo_core" not in edges["hippo_core.actions.hook"]


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


# -- rooms --------------------------------------------------------------------------------


#: hippo_core's rooms, bottom up (docs/architecture.md, "Rooms"): a room imports only the
#: rooms below it and its own modules. ``version`` and ``__main__`` are the modules at the
#: root beside the public API (the package ``hippo_core``, which names every room for type
#: checkers and is left out).
ROOMS_IN_ORDER = [
    "version",
    "base",
    "files",
    "plugins",
    "settings",
    "notes",
    "transcripts",
    "workspace",
    "agents",
    "index",
    "context",
    "dream",
    "packs",
    "schedule",
    "actions",
    "mcp",
    "builtins",
    "cli",
    "__main__",
]
#: Imports against the order not yet removed (issue 40), each with its reason. The list is
#: exact: an import it does not name fails the test below, and so does one it names that
#: is gone, so that it says what is true.
UPWARD = {
    ("dream", "packs"): "the dream loads its passes from the packs' files and manifests "
    "(dream/packs.py, dream/render.py, dream/unit.py) and runs the packs' running set "
    "(dream/run.py), while packs/ builds, checks and vendors packs through that loader and "
    "its evals run the dream: the loader is to move into packs/, the evals into a room "
    "above the dream, and the pass type below both",
}


def room_in_kernel(module: str) -> str:
    """The room of a module of hippo_core (``hippo_core.dream.run``: ``dream``; a module at
    the root is its own room); the package itself is ``""``."""
    return module.split(".")[1] if "." in module else ""


def against_the_order(
    edges: dict[str, dict[str, str]], order: list[str], allowed: set[tuple[str, str]]
) -> tuple[list[str], set[tuple[str, str]]]:
    """Each import from a room to one not below it, as ``where: room imports room
    (module)``, leaving out the pairs ``allowed``; and the allowed pairs that were seen."""
    rank = {name: at for at, name in enumerate(order)}
    wrong: list[str] = []
    seen: set[tuple[str, str]] = set()
    for module, imported in sorted(edges.items()):
        mine = room_in_kernel(module)
        if not mine:
            continue
        assert mine in rank, f"{module}: a room ROOMS_IN_ORDER does not know; place it there"
        for target, where in sorted(imported.items()):
            theirs = room_in_kernel(target)
            if not theirs or theirs == mine or rank[theirs] < rank[mine]:
                continue
            if (mine, theirs) in allowed:
                seen.add((mine, theirs))
                continue
            wrong.append(f"{where}: {mine} imports {theirs} ({target})")
    return wrong, seen


def test_the_order_check_names_the_import_that_breaks_it() -> None:
    edges = {
        "hippo_core": {"hippo_core.b.n": "i:1"},  # the public API: left out
        "hippo_core.a.m": {"hippo_core.a.o": "m:1", "hippo_core.version": "m:2"},
        "hippo_core.a.o": {"hippo_core.b.n": "o:7"},  # up: a is below b
        "hippo_core.b.n": {"hippo_core.a.m": "n:1", "hippo_core": "n:2"},
        "hippo_core.version": {},
        "hippo_core.c": {"hippo_core.b.n": "c:3"},  # up, but allowed
    }
    order = ["version", "a", "b", "c"]
    wrong, seen = against_the_order(edges, order, set())
    assert wrong == ["o:7: a imports b (hippo_core.b.n)"]
    assert seen == set()
    wrong, seen = against_the_order(edges, ["version", "a", "c", "b"], {("c", "b"), ("x", "y")})
    assert wrong == ["o:7: a imports b (hippo_core.b.n)"]
    assert seen == {("c", "b")}
    with pytest.raises(AssertionError, match=r"hippo_core\.d: a room ROOMS_IN_ORDER does not"):
        against_the_order({"hippo_core.d": {}}, order, set())


def test_the_rooms_import_only_downwards() -> None:
    """Lazy imports count; TYPE_CHECKING ones (annotations only) do not, as in the packs."""
    edges = graph(type_checking=False)
    wrong, seen = against_the_order(edges, ROOMS_IN_ORDER, set(UPWARD))
    assert not wrong, "imports that go up or sideways between rooms:\n" + "\n".join(wrong)
    gone = sorted(f"{a} -> {b}" for a, b in set(UPWARD) - seen)
    assert not gone, "removed, so take them out of UPWARD:\n" + "\n".join(gone)


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def rooms_table(text: str) -> dict[str, set[str]]:
    """docs/architecture.md's table of rooms: each room (``root`` for the modules at the
    root) and the modules it names, without the ``(was ...)`` of a renamed one."""
    body = f"\n{text}".partition("\n## Rooms\n")[2].partition("\n## ")[0]
    found: dict[str, set[str]] = {}
    for line in body.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("room", "---"):
            continue
        room = cells[0].strip("`").rstrip("/")
        named = re.sub(r"\(was [^)]*\)", "", cells[2])
        found[room] = set(re.findall(r"`([\w/]+)`", named))
    return found


def test_the_rooms_table_reads_rooms_and_modules() -> None:
    text = (
        "## Rooms\n\n| room | what | modules |\n|---|---|---|\n"
        "| root | the version | `version`, `__main__` |\n"
        "| `files/` | `$HIPPO_HOME`, files | `atomic`, `home` (was `hippo_home`) |\n"
        "| `transcripts/` | sources | `model`, `sources/codex` |\n\n## Next\n| a | b | c |\n"
    )
    assert rooms_table(text) == {
        "root": {"version", "__main__"},
        "files": {"atomic", "home"},
        "transcripts": {"model", "sources/codex"},
    }


def test_the_architecture_names_every_module_in_its_room() -> None:
    """Each module of hippo_core in its room's row of docs/architecture.md, and nothing
    there that is no module (a package's ``__init__`` is its folder, not a module)."""
    named = rooms_table(ARCHITECTURE.read_text(encoding="utf-8"))
    actual: dict[str, set[str]] = {}
    for module, path in modules().items():
        parts = module.split(".")[1:]
        if not parts or path.name == "__init__.py":
            continue
        room, rest = ("root", parts) if len(parts) == 1 else (parts[0], parts[1:])
        actual.setdefault(room, set()).add("/".join(rest))
    # A folder of modules named as one (the pack templates are data, not modules).
    actual["packs"].add("scaffold")
    missing = [
        f"{room}/{name}" for room in actual for name in actual[room] - named.get(room, set())
    ]
    stale = [f"{room}/{name}" for room in named for name in named[room] - actual.get(room, set())]
    assert not missing, "modules docs/architecture.md does not name in their room: " + ", ".join(
        sorted(missing)
    )
    assert not stale, "docs/architecture.md names modules that are not there: " + ", ".join(
        sorted(stale)
    )
    assert [room for room in ROOMS_IN_ORDER if room in named] == [
        room for room in named if room != "root"
    ], "docs/architecture.md's rooms go in the order of ROOMS_IN_ORDER"


def test_the_kernels_root_holds_only_rooms() -> None:
    """``ls hippo_core``: the rooms, the public API, ``__main__`` and the version."""
    found = sorted(
        path.name
        for path in PACKAGE.iterdir()
        if path.name != "__pycache__" and (path.suffix == ".py" or path.is_dir())
    )
    rooms = [name for name in ROOMS_IN_ORDER if (PACKAGE / name).is_dir()]
    assert found == sorted(["__init__.py", "__main__.py", "version.py", *rooms])
    assert all((PACKAGE / room / "__init__.py").is_file() for room in rooms)


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


#: Attributes of public objects that are the kernel's machinery, not its API: pluggy's
#: manager behind ``Plugins`` (a plugin calls hooks through the typed calls, which name a
#: failing plugin; the manager would let it go around them).
MACHINERY = {"Plugins": {"pm"}}
#: Attributes that read a function's or a module's insides: from a public function's
#: ``__globals__`` every private name of its module is one subscript away.
INSIDES = {
    "__globals__",
    "__dict__",
    "__closure__",
    "__code__",
    "__wrapped__",
    "__builtins__",
    "__module__",
}
#: A string that is a module path in hippo_core: what importlib, ``__import__`` and
#: ``sys.modules`` take.
MODULE_PATH = re.compile(r"hippo_core(?:\.[A-Za-z_]\w*)+")
#: The value of the ``hippo_core`` package itself, in ``Uses.value``.
KERNEL = object()


class Instance:
    """A value made by calling a public class, or a public function that says it returns
    one (``load_plugins()`` is a ``Plugins``)."""

    def __init__(self, cls: type) -> None:
        self.cls = cls


class Uses:
    """What one file takes from hippo_core, found in its syntax tree: imports of private
    modules and names, module paths handed to importlib, ``__import__`` or ``sys.modules``,
    private attributes of the package or of public objects (``hippo_core._API``,
    ``hippo_core.dream.run`` once another module imported it, ``load_plugins().pm``), the
    same through ``getattr``, and a function's insides (``now.__globals__``)."""

    def __init__(self, path: Path, shown: str) -> None:
        self.shown = shown
        self.tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.parents = {
            child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)
        }
        self.public = set(hippo_core.__all__)
        self.homes: dict[str, list[str]] = {}
        for name, module in hippo_core._MODULE_OF.items():
            self.homes.setdefault(module, []).append(name)
        #: Names bound to the package (``import hippo_core as h``) or to a public name.
        self.bound: dict[str, object] = {}
        self.found: set[tuple[int, int, str]] = set()

    def at(self, node: ast.AST, what: str) -> None:
        line, column = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        self.found.add((line, column, f"{self.shown}:{line}: {what}"))

    def check(self) -> list[str]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                self.import_(node)
            elif isinstance(node, ast.ImportFrom):
                self.import_from(node)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.module_path(node, node.value)
            elif isinstance(node, ast.JoinedStr):
                self.built_path(node)
            elif isinstance(node, ast.Attribute):
                self.attribute(node, self.value(node.value), node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.call(node, node.func.id)
        return [what for _, _, what in sorted(self.found)]

    def import_(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "hippo_core":
                self.bound[alias.asname or alias.name] = KERNEL
            elif alias.name.startswith("hippo_core."):
                self.at(node, f"import {alias.name}: {_instead(alias.name, self.homes)}")
                if alias.asname is None:
                    self.bound["hippo_core"] = KERNEL

    def import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not (module == "hippo_core" or module.startswith("hippo_core.")):
            return
        for alias in node.names:
            if module == "hippo_core" and alias.name in self.public:
                self.bound[alias.asname or alias.name] = getattr(hippo_core, alias.name)
                continue
            if alias.name == "*":
                self.at(node, f"* from {module}: {_instead(module, self.homes)}")
                continue
            instead = _alternative(module, alias.name, self.homes)
            self.at(node, f"{alias.name} from {module}: {instead}")

    def value(self, node: ast.expr) -> object:
        """What an expression is, as far as hippo_core goes: the package, a public object,
        an ``Instance`` of a public class, or None (not hippo's, or not known)."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            if self.value(node.value) is KERNEL and node.attr in self.public:
                return getattr(hippo_core, node.attr)
            return None
        if isinstance(node, ast.Call):
            made = self.value(node.func)
            if isinstance(made, type):
                return Instance(made)
            returns = getattr(made, "__annotations__", {}).get("return")
            named = returns if isinstance(returns, str) else getattr(returns, "__name__", "")
            if named in self.public and isinstance(getattr(hippo_core, named), type):
                return Instance(getattr(hippo_core, named))
        return None

    def attribute(self, node: ast.AST, base: object, name: str) -> None:
        if name in INSIDES:
            self.at(node, f".{name}: reads the insides of a function or module; use the API")
        elif base is KERNEL:
            if name not in self.public:
                self.at(node, f"hippo_core.{name}: {self.private_path(node, name)}")
        elif base is not None:
            cls = base.cls if isinstance(base, Instance) else base
            label = getattr(cls, "__name__", repr(cls))
            if name.startswith("_") or name in MACHINERY.get(label, ()):
                self.at(node, f"{label}.{name} is not in hippo_core's API (docs/plugins.md)")

    def private_path(self, node: ast.AST, name: str) -> str:
        """What to say of ``hippo_core.<name>...``: the longest chain of attributes read
        from it, as the module it reaches (``hippo_core.dream.run``) or the private name."""
        dotted = f"hippo_core.{name}"
        parent = self.parents.get(node)
        while isinstance(parent, ast.Attribute):
            dotted = f"{dotted}.{parent.attr}"
            parent = self.parents.get(parent)
        known = modules()
        reached = resolve(dotted, known)
        return _instead(reached if reached != "hippo_core" else f"hippo_core.{name}", self.homes)

    def call(self, node: ast.Call, function: str) -> None:
        if function in ("getattr", "hasattr", "setattr", "delattr") and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                self.attribute(node, self.value(node.args[0]), name.value)
        elif function == "vars" and node.args and self.value(node.args[0]) is not None:
            self.at(node, "vars() of hippo_core's objects: reads their insides; use the API")

    def built_path(self, node: ast.JoinedStr) -> None:
        """An f-string that begins with a module path of hippo_core (``f"hippo_core.{x}"``)."""
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and str(first.value).startswith("hippo_core."):
            self.at(node, "a module path of hippo_core built at run time: use the API")

    def module_path(self, node: ast.Constant, text: str) -> None:
        if not MODULE_PATH.fullmatch(text):
            return
        parent = self.parents.get(node)
        how = f"{text!r} names a module of hippo_core"
        if isinstance(parent, ast.Call):
            func = parent.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            how = f"{called}({text!r})"
        elif isinstance(parent, ast.Subscript):
            how = f"sys.modules[{text!r}]"
        self.at(node, f"{how}: {_instead(text, self.homes)}")


def private_uses(path: Path, shown: str = "") -> list[str]:
    """Each use in ``path`` of hippo_core outside its public API, as a line naming the file,
    the line, what it takes and what to use instead. Lazy and TYPE_CHECKING imports count."""
    return Uses(path, shown or path.relative_to(ROOT).as_posix()).check()


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
    found = [line for path in sorted(PACKS.rglob("*.py")) for line in private_uses(path)]
    assert not found, "private hippo_core names in hippo_packs:\n" + "\n".join(found)


def test_a_private_import_is_named_with_its_public_alternative(tmp_path: Path) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(
        "from hippo_core import Workspace, hookimpl\n"
        "from hippo_core.files.processes import process_alive\n"
        "def later():\n"
        "    from hippo_core.dream import receipts\n"
        "    import hippo_core.nowhere\n"
        "    from hippo_core import _API\n",
        encoding="utf-8",
    )
    found = private_uses(fake, "hippo_packs/sleep/_fake_for_test.py")
    assert found == [
        "hippo_packs/sleep/_fake_for_test.py:2: process_alive from hippo_core.files.processes: "
        "use `from hippo_core import process_alive`",
        "hippo_packs/sleep/_fake_for_test.py:4: receipts from hippo_core.dream: "
        "hippo_core.dream.receipts is private; its public names are new_id, proposal_record, "
        "purge_note_history, receipt_record, record_proposal",
        "hippo_packs/sleep/_fake_for_test.py:5: import hippo_core.nowhere: "
        "hippo_core.nowhere is private and has no public name: ask for one in "
        "hippo_core's API (docs/plugins.md) or keep the logic in the pack",
        "hippo_packs/sleep/_fake_for_test.py:6: _API from hippo_core: _API is not in "
        "hippo_core's public API (docs/plugins.md lists it)",
    ]


#: The ways around an import statement that code review found (issue 40): each one a pack
#: module would write to reach a private kernel name, and what the layer check says of it.
WORKAROUNDS = {
    "importlib": (
        "import importlib\nrun = importlib.import_module('hippo_core.dream.run')\n",
        "2: import_module('hippo_core.dream.run'): hippo_core.dream.run is private and has "
        "no public name",
    ),
    "__import__": (
        "__import__('hippo_core.dream.run')\n",
        "1: __import__('hippo_core.dream.run'): hippo_core.dream.run is private",
    ),
    "getattr on the package": (
        "import hippo_core\ntable = getattr(hippo_core, '_API')\n",
        "2: hippo_core._API: hippo_core._API is private",
    ),
    "a private name of the package": (
        "import hippo_core\nhomes = hippo_core._MODULE_OF\n",
        "2: hippo_core._MODULE_OF: hippo_core._MODULE_OF is private",
    ),
    "sys.modules": (
        "import sys\ningest = sys.modules['hippo_core.index.ingest']\n",
        "2: sys.modules['hippo_core.index.ingest']: hippo_core.index.ingest is private",
    ),
    "a public function's globals": (
        "from hippo_core import now\nhidden = now.__globals__['_env_now']\n",
        "2: .__globals__: reads the insides of a function or module; use the API",
    ),
    "the plugin manager": (
        "import hippo_core\nmanager = hippo_core.load_plugins().pm\n",
        "2: Plugins.pm is not in hippo_core's API (docs/plugins.md)",
    ),
    "a module another import loaded": (
        "import hippo_core\nrun = hippo_core.dream.run.run_dream\n",
        "2: hippo_core.dream: hippo_core.dream.run is private and has no public name",
    ),
    "a star import": (
        "from hippo_core.dream.model import *\n",
        "1: * from hippo_core.dream.model: hippo_core.dream.model is private; its public "
        "names are Applier, Call, Change,",
    ),
}


@pytest.mark.parametrize("source,expected", WORKAROUNDS.values(), ids=list(WORKAROUNDS))
def test_the_layer_check_refuses_each_way_around_an_import(
    tmp_path: Path, source: str, expected: str
) -> None:
    fake = tmp_path / "fake.py"
    fake.write_text(source, encoding="utf-8")
    found = private_uses(fake, "hippo_packs/sleep/_fake.py")
    assert len(found) == 1, found
    assert found[0].startswith(f"hippo_packs/sleep/_fake.py:{expected}"), found[0]


def test_the_layer_check_follows_names_and_results_of_the_public_api(tmp_path: Path) -> None:
    """A public name under another name, a public class's private member, getattr on a
    private name, a result a public function says it returns; nothing else is flagged."""
    fake = tmp_path / "fake.py"
    fake.write_text(
        "import hippo_core as h\n"
        "from hippo_core import Workspace as W, load_plugins\n"
        "from importlib import import_module\n"
        "plugins = load_plugins()\n"
        "pm = load_plugins().pm\n"
        "check = W._settings_warnings\n"
        "hidden = getattr(h.now, '__globals__')\n"
        "module = import_module(f'hippo_core.{plugins}')\n"
        "state = vars(h)\n"
        "fine = h.Workspace, h.__version__, plugins.kinds(), import_module('hippo_packs.x')\n"
        "ours = getattr(plugins, 'kinds'), 'hippo_core', 'see hippo_core.plugins.hookspecs'\n",
        encoding="utf-8",
    )
    found = [line.partition(": ")[2] for line in private_uses(fake, "x.py")]
    assert found == [
        "Plugins.pm is not in hippo_core's API (docs/plugins.md)",
        "Workspace._settings_warnings is not in hippo_core's API (docs/plugins.md)",
        ".__globals__: reads the insides of a function or module; use the API",
        "a module path of hippo_core built at run time: use the API",
        "vars() of hippo_core's objects: reads their insides; use the API",
    ]
