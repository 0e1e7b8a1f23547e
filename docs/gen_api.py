"""Write the tables of docs/plugins.md's "The public API" from hippo_core's own table of
its public names (``hippo_core._API``), their signatures and their docstrings.

Run it after changing a public name, its signature or its docstring:
python docs/gen_api.py. tests/test_docs.py fails while the page differs from what this
writes. Only the tables between ``<!-- api: <section> -->`` and ``<!-- /api -->`` are
written; the prose around them is the page's own.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol

from gen_hooks import markdown
from pydantic import BaseModel

import hippo_core

PAGE = Path(__file__).with_name("plugins.md")
TABLE = re.compile(r"(<!-- api: (?P<title>[^>]+) -->\n).*?(<!-- /api -->)", re.DOTALL)


def is_protocol(value: type) -> bool:
    return Protocol in getattr(value, "__mro__", ()) and value is not Protocol


def shown_signature(name: str, value: Any) -> str:
    """``name(arguments)`` without annotations as a plugin calls it; a bare name for a
    value, a protocol (a plugin implements it) or a pydantic model (its fields are many)."""
    if not callable(value) or (isinstance(value, type) and is_protocol(value)):
        return name
    if isinstance(value, type) and issubclass(value, BaseModel):
        return name
    try:
        found = inspect.signature(value)
    except (TypeError, ValueError):
        return name
    shown = [
        parameter.replace(annotation=inspect.Parameter.empty)
        for parameter in found.parameters.values()
        if not parameter.name.startswith("_")
    ]
    plain = found.replace(parameters=shown, return_annotation=inspect.Signature.empty)
    # A dataclass field's default_factory shows as <factory>: the call gives a fresh one.
    return f"{name}{plain}".replace("=<factory>", "=...")


def comment_of(module: str, name: str) -> str:
    """The ``#:`` comment above ``name = ...`` in ``module``: a value has no docstring."""
    source = inspect.getsource(import_module(module))
    lines = source.splitlines()
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            above = []
            at = node.lineno - 2
            while at >= 0 and lines[at].lstrip().startswith("#:"):
                above.insert(0, lines[at].lstrip()[2:].strip())
                at -= 1
            return " ".join(above)
    return ""


def summary(module: str, name: str, value: Any) -> str:
    """The first paragraph of the docstring (or ``#:`` comment) as one line of Markdown."""
    if inspect.isclass(value):
        doc = vars(value).get("__doc__")  # its own, not one it inherits (a protocol's)
    elif inspect.isfunction(value):
        doc = value.__doc__
    else:
        doc = None  # a value: its ``#:`` comment
    text = (inspect.cleandoc(doc) if doc else comment_of(module, name)).split("\n\n", 1)[0]
    text = markdown(" ".join(text.split()))
    return text.replace("``", "`").replace("|", "\\|")


def table(title: str) -> str:
    rows = ["| name | what it is |", "|---|---|"]
    for module, names in hippo_core._API[title].items():
        for name in names:
            value = getattr(hippo_core, name)
            rows.append(f"| `{shown_signature(name, value)}` | {summary(module, name, value)} |")
    return "\n".join(rows) + "\n"


def render(page: str) -> str:
    """``page`` with every marked table written again from the code."""
    return TABLE.sub(lambda m: f"{m[1]}{table(m['title'])}{m[3]}", page)


if __name__ == "__main__":
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE}\n")
