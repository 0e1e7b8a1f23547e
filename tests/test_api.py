"""The public API: what `hippo_core` exports is deliberate, documented and lazy."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import types
from pathlib import Path

import hippo_core

DOCS = Path(__file__).parent.parent / "docs" / "plugins.md"

#: The API by what a plugin does with it, as docs/plugins.md lists it: section -> names.
#: Read from the package's own table, the one place a public name is added.
PUBLIC = {
    title: [name for names in homes.values() for name in names]
    for title, homes in hippo_core._API.items()
}
INIT = Path(hippo_core.__file__)


def test_all_is_the_public_api() -> None:
    every = [name for names in PUBLIC.values() for name in names]
    assert len(every) == len(set(every)), "a name is in two sections of the table"
    assert hippo_core.__all__ == sorted(every)
    assert set(dir(hippo_core)) >= set(every)
    for name in hippo_core.__all__:
        assert getattr(hippo_core, name) is not None


def sections() -> dict[str, str]:
    """The subsections of docs/plugins.md's "The public API", by lower-case title."""
    text = DOCS.read_text(encoding="utf-8")
    api = text.split("\n## The public API\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for part in api.split("\n### ")[1:]:
        title, _, body = part.partition("\n")
        found[title.strip().lower()] = body
    return found


def test_the_plugin_chapter_lists_every_name_where_it_belongs() -> None:
    documented = sections()
    assert list(documented) == [title.lower() for title in PUBLIC]
    for title, names in PUBLIC.items():
        body = documented[title.lower()]
        for name in names:
            if name == "__version__":
                continue
            assert re.search(rf"`{re.escape(name)}[`(]", body), f"{name} is not in '{title}'"


def test_importing_the_api_imports_none_of_it() -> None:
    """`import hippo_core` loads no module the names live in, until a name is used."""
    probe = (
        "import sys, hippo_core\n"
        "print(sorted(m for m in sys.modules if m.startswith('hippo_')))\n"
        "hippo_core.Workspace\n"
        "print('hippo_core.workspace.folder' in sys.modules)\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert found == ["['hippo_core', 'hippo_core.version']", "True"]


def test_the_type_checkers_imports_name_the_table() -> None:
    """The TYPE_CHECKING block of ``hippo_core/__init__.py`` imports each public name from
    the module the table says, and nothing else: what mypy sees is what runs."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    )
    imported = {
        (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module != "typing"
        for alias in node.names
    }
    wanted = {
        (module, name)
        for homes in hippo_core._API.values()
        for module, names in homes.items()
        if module != "hippo_core.version"  # imported at run time, above the block
        for name in names
    }
    assert sorted(imported - wanted) == [], "imported for type checkers but not in _API"
    assert sorted(wanted - imported) == [], "in _API but not imported for type checkers"


def test_each_name_lives_where_the_table_says() -> None:
    """Not a re-export of a re-export: the table names the module that defines it."""
    for name, module in hippo_core._MODULE_OF.items():
        value = getattr(hippo_core, name)
        home = getattr(value, "__module__", None)
        if home is not None and isinstance(value, type | types.FunctionType):
            assert home == module, f"{name} lives in {home}, the table says {module}"
