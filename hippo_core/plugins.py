"""The plugin manager: the built-in plugins, then those of installed distributions.

Third-party plugins come from entry points in the group ``hippo``. ``HIPPO_LOAD_PLUGINS``
chooses among them: unset loads all, an empty value none, a comma-separated list only the
entry points or distributions it names. A plugin that fails to load is logged, listed by
``hippo plugins`` and ``hippo doctor`` with its distribution's name, and skipped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from hippo_core import hookspecs
from hippo_core.errors import HippoError
from hippo_core.version import __version__

if TYPE_CHECKING:
    from hippo_core.budget import ContextPart
    from hippo_core.dream.model import (
        Event,
        ProposalKind,
        Reader,
        Reviewer,
        Validator,
    )
    from hippo_core.findings import Finding
    from hippo_core.hookspecs import BackendFactory
    from hippo_core.notes.note import Note
    from hippo_core.transcripts.model import TranscriptSource
    from hippo_core.workspace import Workspace

ENTRY_POINT_GROUP = "hippo"
DISTRIBUTION = "hippo-memory"
DEFAULT_PLUGINS = (
    "hippo_core.builtins.commands",
    "hippo_core.builtins.packs",
    "hippo_core.builtins.context_parts",
    "hippo_core.builtins.lint",
    "hippo_core.builtins.doctor_checks",
    "hippo_core.builtins.sources",
    "hippo_core.builtins.dreaming",
    "hippo_core.builtins.dream_warnings",
    "hippo_core.builtins.dream_log",
    "hippo_core.builtins.dream_doctor",
    "hippo_core.builtins.pack_doctor",
)

hookimpl = pluggy.HookimplMarker("hippo")


@dataclass(frozen=True)
class PluginInfo:
    """What ``hippo plugins`` shows of one plugin."""

    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...] = ()
    builtin: bool = False
    error: str = ""

    @property
    def origin(self) -> str:
        """The plugin and where it came from, as an error names it."""
        return f"{self.name} ({self.distribution or 'unknown distribution'})"


@dataclass(frozen=True)
class PackSource:
    """A pack a plugin ships: its folder, and the plugin (and distribution) it came from."""

    name: str
    directory: Path
    plugin: PluginInfo


@dataclass(frozen=True)
class CommandEntry:
    """A command a plugin adds: ``hippo NAME``, its one-sentence help, and where it lives.

    ``target`` is ``module:attribute``, imported only when the command runs (or shows its
    help); the attribute is a ``typer.Typer`` app, a click command or a plain function.
    """

    name: str
    target: str
    help: str
    plugin: PluginInfo


@dataclass
class Plugins:
    """The loaded plugins, with a typed call for each hook (the one place errors are named)."""

    pm: pluggy.PluginManager
    origins: dict[str, PluginInfo] = field(default_factory=dict)
    broken: list[PluginInfo] = field(default_factory=list)
    _calling: str = ""

    def infos(self) -> list[PluginInfo]:
        """Every plugin, loaded or broken, with the hooks it implements."""
        loaded = []
        for name, origin in self.origins.items():
            plugin = self.pm.get_plugin(name)
            callers = self.pm.get_hookcallers(plugin) or []
            hooks = tuple(sorted(caller.name for caller in callers))
            loaded.append(
                PluginInfo(name, origin.distribution, origin.version, hooks, origin.builtin)
            )
        return loaded + self.broken

    def implementers(self, hook: str) -> list[PluginInfo]:
        """The plugins that implement ``hook``, in the order they are called."""
        caller = getattr(self.pm.hook, hook)
        return [self._origin(impl.plugin_name) for impl in reversed(caller.get_hookimpls())]

    def _origin(self, plugin_name: str) -> PluginInfo:
        return self.origins.get(plugin_name) or PluginInfo(plugin_name, "", "")

    def _collect(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call every implementation of ``hook`` in pluggy's order; None results dropped.

        Implementations are called one by one rather than through ``pm.hook`` so that an
        exception can name the plugin and distribution it came from.
        """
        results: list[Any] = []
        caller = getattr(self.pm.hook, hook)
        for impl in reversed(caller.get_hookimpls()):
            self._calling = impl.plugin_name
            try:
                value = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            except HippoError:
                raise
            except Exception as exc:
                origin = self._origin(impl.plugin_name).origin
                raise HippoError(
                    f"plugin {origin} failed in {hook}: {type(exc).__name__}: {exc}"
                ) from exc
            if value is not None:
                results.append(value)
        return results

    def packs(self) -> dict[str, PackSource]:
        """Every pack a plugin ships, by name; the first registered under a name wins."""
        found: dict[str, PackSource] = {}
        for source in self.all_packs():
            found.setdefault(source.name, source)
        return found

    def all_packs(self) -> list[PackSource]:
        """Every pack every plugin registers, in order, a name as often as it is registered."""
        found: list[PackSource] = []

        def register(name: str, directory: Path) -> None:
            found.append(PackSource(name, Path(directory), self._origin(self._calling)))

        self._collect("hippo_register_packs", register=register)
        return found

    def all_commands(self) -> list[CommandEntry]:
        """Every command every plugin registers, in order, a name as often as registered."""
        found: list[CommandEntry] = []

        def register(name: str, target: str, help: str) -> None:
            found.append(CommandEntry(name, target, help, self._origin(self._calling)))

        self._collect("hippo_register_commands", register=register)
        return found

    def commands(self) -> dict[str, CommandEntry]:
        """The commands plugins add, by name; the first registered under a name wins."""
        found: dict[str, CommandEntry] = {}
        for entry in self.all_commands():
            found.setdefault(entry.name, entry)
        return found

    def sources(self) -> dict[str, TranscriptSource]:
        """Every transcript source by tool name; the first registered under a name wins."""
        found: dict[str, TranscriptSource] = {}

        def register(source: TranscriptSource) -> None:
            found.setdefault(source.name, source)

        self._collect("hippo_register_sources", register=register)
        return found

    def _registry(self, hook: str, named: bool = False) -> dict[str, Any]:
        """What plugins register through ``hook``, by name; the first under a name wins."""
        found: dict[str, Any] = {}

        def register(*args: Any) -> None:
            name, thing = args if named else (args[0].name, args[0])
            found.setdefault(name, thing)

        self._collect(hook, register=register)
        return found

    def readers(self) -> dict[str, Reader]:
        return self._registry("hippo_register_readers", named=True)

    def kinds(self) -> dict[str, ProposalKind]:
        return self._registry("hippo_register_kinds")

    def validators(self) -> list[Validator]:
        return list(self._registry("hippo_register_validators").values())

    def reviewers(self) -> dict[str, Reviewer]:
        return self._registry("hippo_register_reviewers")

    def backends(self) -> dict[str, BackendFactory]:
        return self._registry("hippo_register_backends", named=True)

    def event(self, workspace: Workspace, event: Event) -> None:
        self._collect("hippo_event", workspace=workspace, event=event)

    def context_parts(
        self, workspace: Workspace, session: str | None, task: str | None
    ) -> list[ContextPart]:
        lists = self._collect(
            "hippo_context_parts", workspace=workspace, session=session, task=task
        )
        return [part for parts in lists for part in parts]

    def lint_note(self, workspace: Workspace, note: Note) -> list[Finding]:
        lists = self._collect("hippo_lint_note", workspace=workspace, note=note)
        return [finding for findings in lists for finding in findings]

    def doctor_checks(self, workspace: Workspace) -> list[Finding]:
        lists = self._collect("hippo_doctor_checks", workspace=workspace)
        return [finding for findings in lists for finding in findings]


_loaded: Plugins | None = None


def load_plugins() -> Plugins:
    """The plugins, loaded on first use and kept for the life of the process."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def reset_plugins() -> None:
    """Forget the loaded plugins, so the next :func:`load_plugins` loads them again."""
    global _loaded
    _loaded = None


def _load() -> Plugins:
    pm = pluggy.PluginManager("hippo")
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module_name in DEFAULT_PLUGINS:
        pm.register(import_module(module_name), name=module_name)
        plugins.origins[module_name] = PluginInfo(
            module_name, DISTRIBUTION, __version__, builtin=True
        )
    pm.check_pending()
    _load_entry_points(plugins, os.environ.get("HIPPO_LOAD_PLUGINS"))
    return plugins


def _wanted(allowed: str | None) -> Callable[[str, str], bool]:
    if allowed is None:
        return lambda name, dist: True
    names = {part.strip() for part in allowed.split(",") if part.strip()}
    return lambda name, dist: name in names or dist in names


def _load_entry_points(plugins: Plugins, allowed: str | None) -> None:
    if allowed is not None and not allowed.strip():
        return
    from hippo_core.entry_points import entry_points

    wanted = _wanted(allowed)
    for point in entry_points(ENTRY_POINT_GROUP):
        if not wanted(point.name, point.distribution) or point.name in plugins.origins:
            continue
        try:
            plugins.pm.register(point.load(), name=point.name)
            plugins.pm.check_pending()
        except Exception as exc:
            if plugins.pm.has_plugin(point.name):
                plugins.pm.unregister(name=point.name)
            error = f"{type(exc).__name__}: {exc}"
            sys.stderr.write(
                f"hippo: plugin {point.name} from {point.distribution} {point.version} "
                f"was skipped: {error}\n"
            )
            info = PluginInfo(point.name, point.distribution, point.version, error=error)
            plugins.broken.append(info)
            continue
        plugins.origins[point.name] = PluginInfo(point.name, point.distribution, point.version)
