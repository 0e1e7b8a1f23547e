"""Plugins read the way the agent's hot path reads them: the same plugins, without pluggy.

Importing pluggy (with :mod:`inspect` and :mod:`typing`, which it needs) costs an agent's
hook three times the interpreter's start on the machines hippo is measured on
(``bench/hook.py``), more than the hook's whole budget. So ``hippo hook ...`` and ``hippo
context`` read the marks (:mod:`hippo_core.plugins.markers`) themselves, for plugins of the plain
shape nearly every plugin has: a module whose hook implementations are plain functions.
Of each they check what pluggy checks when it registers one (the hook exists, or the
implementation is marked optional; it asks only for the hook's arguments) and order the
implementations as pluggy does (``tryfirst``, ``trylast``, the last registered first).

Anything else is left to pluggy: a plugin that is a class or an object, a wrapper, a function
with a signature of its own, or anything pluggy would refuse (it has the words for it).
:class:`GiveWay` tells the caller to load the plugins with pluggy after all, so the hot path
never decides differently from it; ``tests/test_hot_plugins.py`` checks the two agree.
"""

from __future__ import annotations

from types import FunctionType, ModuleType

from hippo_core.base.records import Record
from hippo_core.plugins.markers import IMPL, SPEC

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


class GiveWay(Exception):
    """A plugin (or a hook) that only pluggy reads right; the message says what."""


class Impl(Record):
    """One implementation of a hook: its plugin's name, the function and what it asks for."""

    __slots__ = ("plugin_name", "function", "argnames", "tryfirst", "trylast")
    plugin_name: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]
    tryfirst: bool
    trylast: bool

    def __init__(
        self,
        plugin_name: str,
        function: Callable[..., Any],
        argnames: tuple[str, ...],
        tryfirst: bool = False,
        trylast: bool = False,
    ) -> None:
        self._set(
            plugin_name=plugin_name,
            function=function,
            argnames=argnames,
            tryfirst=tryfirst,
            trylast=trylast,
        )


def specs(module: ModuleType) -> dict[str, tuple[str, ...]]:
    """The hooks ``module`` specifies (marked ``@hookspec``), with their argument names."""
    found = {}
    for name, value in vars(module).items():
        options = getattr(value, SPEC, None)
        if not isinstance(options, dict) or not isinstance(value, FunctionType):
            continue
        if options.get("historic") or options.get("warn_on_impl"):
            raise GiveWay(f"hook {name} is historic or warns: pluggy calls it")
        if options.get("warn_on_impl_args"):
            raise GiveWay(f"hook {name} warns on arguments: pluggy calls it")
        found[name] = argnames(value, with_defaults=True)
    return found


def implementations(
    plugin: object, plugin_name: str, hooks: dict[str, tuple[str, ...]]
) -> Iterator[tuple[str, Impl]]:
    """Each hook ``plugin`` implements and its implementation, as pluggy would register them."""
    if not isinstance(plugin, ModuleType):
        raise GiveWay(f"plugin {plugin_name} is not a module")
    namespace = vars(plugin)
    for attribute in dir(plugin):  # pluggy registers in dir() order too
        value = namespace.get(attribute)
        options = getattr(value, IMPL, None)
        if not isinstance(options, dict):
            continue
        if not isinstance(value, FunctionType):
            raise GiveWay(f"{plugin_name}.{attribute} is marked but not a plain function")
        if options.get("wrapper") or options.get("hookwrapper"):
            raise GiveWay(f"{plugin_name}.{attribute} is a wrapper")
        hook = options.get("specname") or attribute
        if hook not in hooks:
            if options.get("optionalhook"):
                continue
            raise GiveWay(f"unknown hook {hook!r} in plugin {plugin_name}")
        wanted = argnames(value)
        if not set(wanted) <= set(hooks[hook]):
            raise GiveWay(f"{plugin_name}.{attribute} asks for arguments {hook} does not have")
        impl = Impl(
            plugin_name,
            value,
            wanted,
            bool(options.get("tryfirst")),
            bool(options.get("trylast")),
        )
        yield hook, impl


def argnames(function: FunctionType, *, with_defaults: bool = False) -> tuple[str, ...]:
    """The positional parameters of a plain function, as pluggy's ``varnames`` finds them:
    those with defaults left out unless ``with_defaults``."""
    if hasattr(function, "__wrapped__") or hasattr(function, "__signature__"):
        raise GiveWay(f"{function.__qualname__} has a signature of its own")
    if "." in function.__qualname__.rsplit("<locals>.", 1)[-1]:
        raise GiveWay(f"{function.__qualname__} is defined in a class")
    code = function.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = function.__defaults__ or ()
    if defaults and not with_defaults:
        names = names[: -len(defaults)]
    return tuple(names)


def add(impls: list[Impl], impl: Impl) -> None:
    """Insert ``impl`` where pluggy puts an implementation (not a wrapper) in its list,
    which it then calls from the end: ``tryfirst`` ones, the rest last registered first,
    then ``trylast`` ones."""
    if impl.trylast:
        impls.insert(0, impl)
    elif impl.tryfirst:
        impls.append(impl)
    else:
        at = len(impls) - 1
        while at >= 0 and impls[at].tryfirst:
            at -= 1
        impls.insert(at + 1, impl)
