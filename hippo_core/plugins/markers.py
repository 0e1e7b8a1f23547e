"""The marks that make a function a hook (``@hookspec``) or a plugin's implementation of one
(``@hookimpl``).

They are pluggy's own format (an attribute ``hippo_spec`` or ``hippo_impl`` holding the
options as a dictionary), so pluggy's plugin manager reads them as if pluggy had made them,
but making them imports nothing: a plugin module costs an agent's hot path only its own
code, and the hot path can read the marks without pluggy (:mod:`hippo_core.plugins.hot`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    F = TypeVar("F", bound=Callable[..., Any])

PROJECT = "hippo"
IMPL = f"{PROJECT}_impl"
SPEC = f"{PROJECT}_spec"


class HookimplMarker:
    """``@hookimpl`` and ``@hookimpl(tryfirst=True)``: as :class:`pluggy.HookimplMarker`."""

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    def __call__(
        self,
        function: F | None = None,
        *,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> Any:
        options = {
            "wrapper": wrapper,
            "hookwrapper": hookwrapper,
            "optionalhook": optionalhook,
            "tryfirst": tryfirst,
            "trylast": trylast,
            "specname": specname,
        }

        def mark(func: F) -> F:
            setattr(func, f"{self.project_name}_impl", dict(options))
            return func

        return mark if function is None else mark(function)


class HookspecMarker:
    """``@hookspec``: as :class:`pluggy.HookspecMarker`."""

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    if TYPE_CHECKING:

        @overload
        def __call__(self, function: F) -> F: ...

        @overload
        def __call__(
            self, function: None = None, *, firstresult: bool = False, historic: bool = False
        ) -> Callable[[F], F]: ...

    def __call__(
        self,
        function: F | None = None,
        *,
        firstresult: bool = False,
        historic: bool = False,
        warn_on_impl: Warning | None = None,
        warn_on_impl_args: dict[str, Warning] | None = None,
    ) -> Any:
        if historic and firstresult:
            raise ValueError("cannot have a historic firstresult hook")
        options = {
            "firstresult": firstresult,
            "historic": historic,
            "warn_on_impl": warn_on_impl,
            "warn_on_impl_args": warn_on_impl_args,
        }

        def mark(func: F) -> F:
            setattr(func, f"{self.project_name}_spec", dict(options))
            return func

        return mark if function is None else mark(function)


#: Marks a hook function: ``@hookimpl``, ``@hookimpl(tryfirst=True)``,
#: ``@hookimpl(trylast=True)``.
hookimpl = HookimplMarker(PROJECT)
hookspec = HookspecMarker(PROJECT)
