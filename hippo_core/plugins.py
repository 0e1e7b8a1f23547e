"""The plugin manager: the built-in plugins, then those of installed distributions.

Third-party plugins come from entry points in the group ``hippo``. ``HIPPO_LOAD_PLUGINS``
chooses among them: unset loads all, an empty value none, a comma-separated list only the
entry points or distributions it names. A plugin that fails to load is logged, listed by
``hippo plugins`` and ``hippo doctor`` with its distribution's name, and skipped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from hippo_core import __version__, hookspecs
from hippo_core.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.context import ContextPart
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
    "hippo_core.builtins.packs",
    "hippo_core.builtins.context_parts",
    "hippo_core.builtins.lint",
    "hippo_core.builtins.doctor_checks",
    "hippo_core.builtins.sources.claude_code",
    "hippo_core.builtins.sources.codex",
    "hippo_core.builtins.sources.opencode",
    "hippo_core.builtins.sources.command_code",
    "hippo_core.builtins.sources.dsh",
    "hippo_core.builtins.sources.gemini",
    "hippo_core.builtins.sources.muse",
    "hippo_core.builtins.dreaming",
    "hippo_core.builtins.dream_warnings",
    "hippo_core.builtins.dream_log",
    "hippo_core.builtins.dream_doctor",
    "hippo_core.builtins.pack_doctor",
)

log = logging.getLogger("hippo")
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


@dataclass(frozen=True)
class PackSource:
    """A pack a plugin ships: its folder, and the plugin (and distribution) it came from."""

    name: str
    directory: Path
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
                origin = self.origins.get(impl.plugin_name)
                dist = origin.distribution if origin else "unknown distribution"
                raise HippoError(
                    f"plugin {impl.plugin_name} ({dist}) failed in {hook}: "
                    f"{type(exc).__name__}: {exc}"
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
            origin = self.origins.get(self._calling, PluginInfo(self._calling, "", ""))
            found.append(PackSource(name, Path(directory), origin))

        self._collect("hippo_register_packs", register=register)
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
    import importlib

    pm = pluggy.PluginManager("hippo")
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
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
    from importlib.metadata import entry_points

    wanted = _wanted(allowed)
    for point in _unique(entry_points(group=ENTRY_POINT_GROUP)):
        dist = point.dist.name if point.dist else "unknown distribution"
        version = point.dist.version if point.dist else ""
        if not wanted(point.name, dist) or point.name in plugins.origins:
            continue
        try:
            plugins.pm.register(point.load(), name=point.name)
            plugins.pm.check_pending()
        except Exception as exc:
            if plugins.pm.has_plugin(point.name):
                plugins.pm.unregister(name=point.name)
            error = f"{type(exc).__name__}: {exc}"
            log.warning(
                "hippo: plugin %s from %s %s was skipped: %s", point.name, dist, version, error
            )
            plugins.broken.append(PluginInfo(point.name, dist, version, error=error))
            continue
        plugins.origins[point.name] = PluginInfo(point.name, dist, version)


def _unique(points: Iterable[Any]) -> list[Any]:
    # A distribution installed twice on sys.path lists its entry points twice.
    seen: dict[str, Any] = {}
    for point in points:
        seen.setdefault(point.name, point)
    return list(seen.values())
