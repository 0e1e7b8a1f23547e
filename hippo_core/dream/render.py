"""Prompts: a pack's jinja2 templates, checked when the pack loads and rendered in a sandbox.

A prompt may use only the placeholders its pass reads (``{{notes}}`` and so on), in itself
and in every file it includes, imports or extends. Templates come only from the pack's
folder, under the rules of every pack file (inside the pack, no symbolic links, at most
64 KiB, UTF-8). jinja2 is imported here and nowhere else: ``hippo context`` never loads it.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from jinja2 import BaseLoader, Environment, StrictUndefined, TemplateSyntaxError, meta, nodes
from jinja2.sandbox import SandboxedEnvironment

from hippo_core.base.errors import HippoError
from hippo_core.dream.model import Pass
from hippo_core.packs.files import PackError, pack_path, read_overlaid

INCLUDES = (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)


def check_prompt(pass_: Pass, readers: Collection[str]) -> None:
    """Refuse the prompt of ``pass_`` if a file of its include tree does not compile or
    uses a placeholder that is not in the pass's ``reads`` (``readers``: the registered
    readers, to tell a reader the pass does not read from a name that is none)."""
    walk = _Walk(_environment(pass_.roots), pass_.roots)
    walk.visit(pass_.prompt, what="prompt", referrer=pass_.file, line=None, chain=())
    reads = ", ".join(pass_.reads) or "nothing"
    for use in walk.uses:
        if use.name in pass_.reads:
            continue
        if use.name in readers:
            problem = f"is not in the reads of passes/{pass_.name}.toml ({reads})"
        else:
            close = difflib.get_close_matches(use.name, list(readers), n=1, cutoff=0.6)
            hint = f" - did you mean {_braced(close[0])}?" if close else ""
            known = ", ".join(sorted(readers)) or "none"
            problem = f"is not a reader here; the readers are: {known}{hint}"
        raise PackError(use.path, f"placeholder {_braced(use.name)} {problem}", use.line)


def render_prompt(pass_: Pass, values: dict[str, str]) -> str:
    """The prompt of ``pass_`` with ``values`` (reader name -> text) in its placeholders,
    each as material (:func:`~hippo_core.dream.blocks.as_material`): no line of what a
    reader gives can read as one of the prompt's own sections."""
    from hippo_core.dream.blocks import as_material

    environment = _environment(pass_.roots)
    material = {name: as_material(text) for name, text in values.items()}
    try:
        return environment.get_template(pass_.prompt).render(material)
    except HippoError:
        raise
    except TemplateSyntaxError as exc:
        path = Path(exc.filename) if exc.filename else pass_.root / pass_.prompt
        message = f"template syntax error: {exc.message}"
        raise PackError(path, message, exc.lineno) from None
    except Exception as exc:
        # Whatever a template does wrong (an undefined value, an unsafe attribute in the
        # sandbox, a division by zero) is the pack's problem: one line, never a traceback.
        frame, line = _template_frame(exc.__traceback__, pass_.roots)
        path = frame or pass_.root / pass_.prompt
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        raise PackError(path, f"cannot render: {message}", line) from None


def _braced(name: str) -> str:
    return "{{" + name + "}}"


class _PackLoader(BaseLoader):
    """Templates by their path in the pack (or a theme over it), read under the rules of
    every pack file."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        self.roots = roots

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        referrer = self.roots[-1]
        path, text = read_overlaid(self.roots, template, what="template", referrer=referrer)
        stamp = _stamp(path)
        return text, os.fspath(path), lambda: _stamp(path) == stamp


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@functools.cache
def _environment(roots: tuple[Path, ...]) -> SandboxedEnvironment:
    """One sandbox per pack folder (and themes); it reloads a template whose file changed."""
    environment = SandboxedEnvironment(
        loader=_PackLoader(roots),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        auto_reload=True,
    )
    # No globals (range, lipsum, ...): the readers are a prompt's only names.
    environment.globals.clear()
    return environment


@dataclass(frozen=True)
class _Use:
    name: str
    path: Path
    line: int | None


@dataclass
class _Walk:
    """The files of a prompt's include tree, each compiled, and the names they use."""

    environment: SandboxedEnvironment
    roots: tuple[Path, ...]
    uses: list[_Use] = field(default_factory=list)
    done: set[str] = field(default_factory=set)

    def visit(
        self, name: str, *, what: str, referrer: Path, line: int | None, chain: tuple[str, ...]
    ) -> None:
        path, source = read_overlaid(self.roots, name, what=what, referrer=referrer, line=line)
        rel = pack_path(name)
        if rel in chain:
            circle = " -> ".join((*chain[chain.index(rel) :], rel))
            raise PackError(referrer, f"includes go round in a circle: {circle}", line)
        if rel in self.done:
            return
        self.done.add(rel)
        try:
            tree = self.environment.parse(source, rel, os.fspath(path))
            self.environment.compile(tree, rel, os.fspath(path))
        except TemplateSyntaxError as exc:
            raise PackError(path, f"template syntax error: {exc.message}", exc.lineno) from None
        found = [(_line_of_name(tree, n), n) for n in meta.find_undeclared_variables(tree)]
        self.uses += [_Use(n, path, at) for at, n in sorted(found, key=lambda f: (f[0] or 0, f[1]))]
        for ref in meta.find_referenced_templates(tree):
            if ref is None:
                raise PackError(path, "includes must name a file of the pack")
            at = _line_of_include(tree, ref)
            self.visit(ref, what="include", referrer=path, line=at, chain=(*chain, rel))


def _line_of_name(tree: nodes.Template, name: str) -> int | None:
    for node in tree.find_all(nodes.Name):
        if node.name == name and node.ctx == "load":
            return node.lineno
    return None


def _line_of_include(tree: nodes.Template, ref: str) -> int | None:
    for node in tree.find_all(INCLUDES):
        target = getattr(node, "template", None)
        names = target.items if isinstance(target, nodes.Tuple | nodes.List) else [target]
        if any(isinstance(n, nodes.Const) and n.value == ref for n in names):
            return node.lineno
    return None


def _template_frame(
    trace: TracebackType | None, roots: tuple[Path, ...]
) -> tuple[Path | None, int | None]:
    """The innermost template frame of a failed render: jinja2 maps its lines to the file."""
    found: tuple[Path | None, int | None] = (None, None)
    inside = tuple(os.fspath(root) + os.sep for root in roots)
    while trace is not None:
        filename = trace.tb_frame.f_code.co_filename
        if filename.startswith(inside):
            found = (Path(filename), trace.tb_lineno)
        trace = trace.tb_next
    return found
