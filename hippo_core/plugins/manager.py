"""The plugin manager: the built-in plugins, then those of installed distributions.

Third-party plugins come from entry points in the group ``hippo``. ``HIPPO_LOAD_PLUGINS``
chooses among them: unset loads all, an empty value none, a comma-separated list only the
entry points or distributions it names. A plugin that fails to load is logged, listed by
``hippo plugins`` and ``hippo doctor`` with its distribution's name, and skipped.

pluggy's plugin manager loads them, checks them and orders their hooks. The agent's hot
path (``hippo hook ...``, ``hippo context``) cannot afford to import pluggy, so it loads the
same plugins through :mod:`hippo_core.plugins.hot`, which reads the same marks the same way
and gives way to pluggy for any plugin it could read differently (``load_plugins(hot=True)``).
"""

from __future__ import annotations

import os
import sys

from hippo_core.base.errors import HippoError
from hippo_core.base.records import Record
from hippo_core.plugins import hookspecs
from hippo_core.plugins.entry_points import import_module
from hippo_core.plugins.markers import hookimpl
from hippo_core.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    import pluggy

    from hippo_core.base.findings import Finding
    from hippo_core.context.budget import ContextPart
    from hippo_core.dream.model import (
        Applier,
        ProposalKind,
        Reader,
        Reviewer,
        Validator,
    )
    from hippo_core.notes.note import Note
    from hippo_core.plugins.agent import Agent
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.hookspecs import BackendFactory
    from hippo_core.plugins.hot import Impl
    from hippo_core.plugins.tools import Tool
    from hippo_core.transcripts.model import TranscriptSource
    from hippo_core.workspace.folder import Workspace

__all__ = ["DEFAULT_PLUGINS", "Plugins", "hookimpl", "load_plugins"]

ENTRY_POINT_GROUP = "hippo"
DISTRIBUTION = "hippo-memory"
#: hippo's own plugins, in the order they are registered, and the hooks each implements: the
#: hot path imports a built-in only when it calls one of its hooks (a test keeps this equal to
#: what pluggy finds in the modules).
BUILTIN_HOOKS = {
    "hippo_core.builtins.commands": ("hippo_register_commands",),
    "hippo_core.builtins.packs": ("hippo_register_packs",),
    "hippo_core.builtins.context_parts": ("hippo_context_parts",),
    "hippo_core.builtins.lint": ("hippo_lint_note",),
    "hippo_core.builtins.doctor_checks": ("hippo_doctor_checks",),
    "hippo_core.builtins.agents.claude_code": ("hippo_register_agents",),
    "hippo_core.builtins.agents.codex": ("hippo_register_agents",),
    "hippo_core.builtins.agents.gemini": ("hippo_register_agents",),
    "hippo_core.builtins.agents.opencode": ("hippo_register_agents",),
    "hippo_core.builtins.agents.command_code": ("hippo_register_agents",),
    "hippo_core.builtins.agents.dsh": ("hippo_register_agents",),
    "hippo_core.builtins.agents.muse": ("hippo_register_agents",),
    "hippo_core.builtins.dreaming": (
        "hippo_register_appliers",
        "hippo_register_backends",
        "hippo_register_kinds",
        "hippo_register_readers",
        "hippo_register_reviewers",
        "hippo_register_validators",
    ),
    "hippo_core.builtins.dream_warnings": ("hippo_context_parts",),
    "hippo_core.builtins.dream_log": ("hippo_event",),
    "hippo_core.builtins.dream_doctor": ("hippo_doctor_checks",),
    "hippo_core.builtins.pack_doctor": ("hippo_doctor_checks",),
    "hippo_core.builtins.agents_doctor": ("hippo_doctor_checks",),
    "hippo_core.builtins.tools": ("hippo_register_tools",),
    "hippo_core.builtins.team_doctor": ("hippo_doctor_checks",),
    "hippo_core.builtins.relevance_doctor": ("hippo_doctor_checks",),
    "hippo_core.builtins.triggers": (
        "hippo_doctor_checks",
        "hippo_event",
        "hippo_register_settings",
    ),
}
DEFAULT_PLUGINS = tuple(BUILTIN_HOOKS)


class PluginInfo(Record):
    """What ``hippo plugins`` shows of one plugin."""

    __slots__ = ("name", "distribution", "version", "hooks", "builtin", "error")
    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]
    builtin: bool
    error: str

    def __init__(
        self,
        name: str,
        distribution: str,
        version: str,
        hooks: tuple[str, ...] = (),
        builtin: bool = False,
        error: str = "",
    ) -> None:
        self._set(
            name=name,
            distribution=distribution,
            version=version,
            hooks=hooks,
            builtin=builtin,
            error=error,
        )

    @property
    def first_party(self) -> bool:
        """hippo's own: a built-in plugin, or one of hippo's distribution (the packs it ships).
        Its packs run only through a copy in the workspace, as ``hippo pack add`` makes."""
        return self.builtin or self.distribution == DISTRIBUTION

    @property
    def origin(self) -> str:
        """The plugin and where it came from, as an error names it."""
        return f"{self.name} ({self.distribution or 'unknown distribution'})"


class PackSource(Record):
    """A pack a plugin ships: its folder, and the plugin (and distribution) it came from."""

    __slots__ = ("name", "directory", "plugin")
    name: str
    directory: Path
    plugin: PluginInfo

    def __init__(self, name: str, directory: Path, plugin: PluginInfo) -> None:
        self._set(name=name, directory=directory, plugin=plugin)


class CommandEntry(Record):
    """A command a plugin adds: ``hippo NAME``, its one-sentence help, and where it lives.

    ``target`` is ``module:attribute``, imported only when the command runs (or shows its
    help); the attribute is a ``typer.Typer`` app, a click command or a plain function.
    """

    __slots__ = ("name", "target", "help", "plugin")
    name: str
    target: str
    help: str
    plugin: PluginInfo

    def __init__(self, name: str, target: str, help: str, plugin: PluginInfo) -> None:
        self._set(name=name, target=target, help=help, plugin=plugin)


class ToolEntry(Record):
    """An MCP tool a plugin adds, and the plugin (and distribution) it came from."""

    __slots__ = ("tool", "plugin")
    tool: Tool
    plugin: PluginInfo

    def __init__(self, tool: Tool, plugin: PluginInfo) -> None:
        self._set(tool=tool, plugin=plugin)


class ScheduleJob(Record):
    """A job a plugin offers ``hippo schedule install`` (``--<name>``), and its plugin."""

    __slots__ = ("name", "every", "args", "help", "plugin", "pack")
    name: str
    every: str
    args: tuple[str, ...]
    help: str
    plugin: PluginInfo
    pack: str
    """The pack the job needs in the workspace (``sleep``); empty for none."""

    def __init__(
        self,
        name: str,
        every: str,
        args: tuple[str, ...],
        help: str,
        plugin: PluginInfo,
        pack: str = "",
    ) -> None:
        self._set(name=name, every=every, args=args, help=help, plugin=plugin, pack=pack)


class Plugins:
    """The loaded plugins, with a typed call for each hook (the one place errors are named):
    ``kinds()``, ``readers()``, ``tools()``, ``commands()``, ``schedule_jobs()``,
    ``event(workspace, event)``, ...

    ``pm`` is pluggy's plugin manager, or None when the hot path loaded them: ``read`` then
    holds what each third-party plugin implements, and a hook's implementations are put in
    pluggy's order the first time it is called (built-ins imported then).
    """

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.pm = pm
        self.read: dict[str, list[tuple[str, Impl]]] = {}
        self.origins: dict[str, PluginInfo] = {}
        self.broken: list[PluginInfo] = []
        self.failed: dict[str, str] = {}
        """Plugins that raised while registering what they add, by name: what they said.
        Their other registrations stand; the one that raised is left out."""
        self._calling = ""
        self._hot: dict[str, list[Impl]] = {}
        self._agent_plugins: dict[str, PluginInfo] = {}

    def infos(self) -> list[PluginInfo]:
        """Every plugin, loaded or broken, with the hooks it implements."""
        hooks: dict[str, set[str]] = {name: set() for name in self.origins}
        if self.pm is None:
            for hook in _specs():
                for impl in self._impls(hook):
                    hooks[impl.plugin_name].add(hook)
        else:
            for name in self.origins:
                callers = self.pm.get_hookcallers(self.pm.get_plugin(name)) or []
                hooks[name].update(caller.name for caller in callers)
        loaded = [
            PluginInfo(name, o.distribution, o.version, tuple(sorted(hooks[name])), o.builtin)
            for name, o in self.origins.items()
        ]
        return loaded + self.broken

    def implementers(self, hook: str) -> list[PluginInfo]:
        """The plugins that implement ``hook``, in the order they are called."""
        return [self._origin(impl.plugin_name) for impl in self._impls(hook)]

    def _impls(self, hook: str) -> list[Any]:
        """The implementations of ``hook`` in the order hippo calls them: ``tryfirst`` ones,
        then the rest in the order their plugins registered (hippo's own first, so the first
        to register a name keeps it), then ``trylast`` ones.

        (pluggy's own call order puts the last registered first; hippo collects what every
        plugin registers, and a plugin must not replace a built-in by coming later.)
        """
        if self.pm is not None:
            listed = getattr(self.pm.hook, hook).get_hookimpls()
        else:
            if hook not in self._hot:
                self._hot[hook] = self._ordered(hook)
            listed = self._hot[hook]
        return sorted(listed, key=_rank)

    def _ordered(self, hook: str) -> list[Impl]:
        """``hook``'s implementations as pluggy lists them, plugin by plugin as registered."""
        from hippo_core.plugins import hot

        impls: list[Impl] = []
        for name in self.origins:
            if name in BUILTIN_HOOKS and name not in self.read:
                if hook not in BUILTIN_HOOKS[name]:
                    continue
                found = hot.implementations(import_module(name), name, _specs())
                self.read[name] = list(found)
            for implemented, impl in self.read.get(name, ()):
                if implemented == hook:
                    hot.add(impls, impl)
        return impls

    def _origin(self, plugin_name: str) -> PluginInfo:
        return self.origins.get(plugin_name) or PluginInfo(plugin_name, "", "")

    def collect(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call every implementation of ``hook``; what each returned, None left out."""
        return self._collect(hook, **kwargs)

    def _collect(self, hook: str, *, tolerant: bool = False, **kwargs: Any) -> list[Any]:
        """Call every implementation of ``hook`` in pluggy's order; None results dropped.

        Implementations are called one by one rather than through ``pm.hook`` so that an
        exception can name the plugin and distribution it came from. ``tolerant`` (the
        hooks where plugins register things): a third-party plugin that raises is noted in
        :attr:`failed` and the others go on, so one bad plugin stops no command.
        """
        results: list[Any] = []
        for impl in self._impls(hook):
            self._calling = impl.plugin_name
            try:
                value = self._call_one(impl, hook, **kwargs)
            except HippoError as error:
                origin = self._origin(impl.plugin_name)
                if not tolerant or origin.builtin or not _raised_by_plugin(error):
                    raise
                self.failed.setdefault(impl.plugin_name, str(error))
                continue
            if value is not None:
                results.append(value)
        return results

    def clashes(self) -> list[str]:
        """Every name a plugin registers (a reader, a kind, a reviewer ...) that another
        plugin registered first, in words: the later registration is left out."""
        lines: list[str] = []
        for hook, what, named in _NAMED_HOOKS:
            lines += self._clashes(hook, what, named)
        return lines

    def _clashes(self, hook: str, what: str, named: bool) -> list[str]:
        first: dict[str, PluginInfo] = {}
        lines = []

        def register(*args: Any) -> None:
            name = str(args[0] if named else getattr(args[0], "name", ""))
            plugin = self._origin(self._calling)
            if name in first and first[name].name != plugin.name:
                lines.append(
                    f"plugin {plugin.origin} registers the {what} '{name}', which "
                    f"{first[name].origin} registered first; that one is used"
                )
            first.setdefault(name, plugin)

        self._collect(hook, tolerant=True, register=register)
        return lines

    def packs(self) -> dict[str, PackSource]:
        """Every pack a plugin ships, by name; the first registered under a name wins."""
        found: dict[str, PackSource] = {}
        for source in self.all_packs():
            found.setdefault(source.name, source)
        return found

    def all_packs(self) -> list[PackSource]:
        """Every pack every plugin registers, in order, a name as often as it is registered."""
        found: list[PackSource] = []

        from pathlib import Path

        def register(name: str, directory: Path) -> None:
            found.append(PackSource(name, Path(directory), self._origin(self._calling)))

        self._collect("hippo_register_packs", tolerant=True, register=register)
        return found

    def all_commands(self) -> list[CommandEntry]:
        """Every command every plugin registers, in order, a name as often as registered."""
        found: list[CommandEntry] = []

        def register(name: str, target: str, help: str) -> None:
            found.append(CommandEntry(name, target, help, self._origin(self._calling)))

        self._collect("hippo_register_commands", tolerant=True, register=register)
        return found

    def commands(self) -> dict[str, CommandEntry]:
        """The commands plugins add, by name; the first registered under a name wins."""
        found: dict[str, CommandEntry] = {}
        for entry in self.all_commands():
            found.setdefault(entry.name, entry)
        return found

    def all_tools(self) -> list[ToolEntry]:
        """Every MCP tool every plugin registers, in order, a name as often as registered."""
        from hippo_core.plugins.tools import Tool

        found: list[ToolEntry] = []

        def register(tool: Tool) -> None:
            plugin = self._origin(self._calling)
            if not isinstance(tool, Tool):
                raise HippoError(
                    f"plugin {plugin.origin} registered {type(tool).__name__} as a tool; "
                    "register a hippo_core.Tool"
                )
            found.append(ToolEntry(tool, plugin))

        self._collect("hippo_register_tools", register=register)
        return found

    def tools(self) -> dict[str, Tool]:
        """The MCP tools plugins add, by name; the first registered under a name wins."""
        found: dict[str, Tool] = {}
        for entry in self.all_tools():
            found.setdefault(entry.tool.name, entry.tool)
        return found

    def schedule_jobs(self, problems: list[str] | None = None) -> dict[str, ScheduleJob]:
        """The jobs plugins offer ``hippo schedule install``, by name; the first registered
        under a name wins (``dream`` is hippo's own). A job registered wrong is left out,
        with a line saying why added to ``problems``."""
        found: dict[str, ScheduleJob] = {}

        def register(
            name: str, every: str, args: tuple[str, ...], help: str, pack: str = ""
        ) -> None:
            plugin = self._origin(self._calling)
            words = tuple(args) if isinstance(args, (tuple, list)) else ()
            why = ""
            if not _job_name(name):
                why = "a name is lower-case letters, digits and -, and not dream"
            elif not words or not all(isinstance(w, str) and w.strip() for w in words):
                why = "it gives no hippo arguments to run"
            elif not isinstance(pack, str):
                why = "the pack it needs is not a name"
            if why:
                if problems is not None:
                    problems.append(
                        f"plugin {plugin.origin} registered the schedule job {name!r}, which "
                        f"is left out: {why}"
                    )
                return
            found.setdefault(name, ScheduleJob(name, every, words, help, plugin, pack))

        self._collect("hippo_register_schedule_jobs", register=register)
        return found

    def agents(self, problems: list[str] | None = None) -> dict[str, Agent]:
        """Every coding agent by name; the first registered under a name wins. An agent
        registered wrong is left out, with a line saying why added to ``problems``."""
        from hippo_core.plugins.agent import Agent

        found: dict[str, Agent] = {}

        def register(agent: Agent) -> None:
            plugin = self._origin(self._calling)
            why = (
                agent.check()
                if isinstance(agent, Agent)
                else f"it is a {type(agent).__name__}, not a hippo_core.Agent"
            )
            if why:
                if problems is not None:
                    name = getattr(agent, "name", "?")
                    problems.append(
                        f"plugin {plugin.origin} registered the agent {name!r}, which is left "
                        f"out: {why}"
                    )
                return
            if agent.name not in found:
                found[agent.name] = agent
                self._agent_plugins[agent.name] = plugin

        self._collect("hippo_register_agents", tolerant=True, register=register)
        return found

    def is_builtin_agent(self, name: str) -> bool:
        """Whether the agent ``name`` (as :meth:`agents` found it) is one of hippo's own."""
        plugin = self._agent_plugins.get(name)
        return plugin is not None and plugin.builtin

    def sources(self) -> dict[str, TranscriptSource]:
        """Every agent's transcript sources by tool name, in the order the agents were
        registered; the first source under a name wins."""
        found: dict[str, TranscriptSource] = {}
        for agent in self.agents().values():
            if agent.sources is None:
                continue
            plugin = self._agent_plugins[agent.name]
            try:
                made = list(agent.sources())
            except Exception as exc:  # one bad plugin stops no ingest; doctor names it
                if plugin.builtin:
                    raise
                self.failed.setdefault(plugin.name, f"{type(exc).__name__}: {exc}")
                continue
            for source in made:
                found.setdefault(source.name, source)
        return found

    def _registry(self, hook: str, named: bool = False) -> dict[str, Any]:
        """What plugins register through ``hook``, by name; the first under a name wins."""
        found: dict[str, Any] = {}

        def register(*args: Any) -> None:
            name, thing = args if named else (args[0].name, args[0])
            found.setdefault(name, thing)

        self._collect(hook, tolerant=True, register=register)
        return found

    def readers(self) -> dict[str, Reader]:
        return self._registry("hippo_register_readers", named=True)

    def kinds(self) -> dict[str, ProposalKind]:
        return self._registry("hippo_register_kinds")

    def validators(self) -> list[Validator]:
        return list(self._registry("hippo_register_validators").values())

    def reviewers(self) -> dict[str, Reviewer]:
        return self._registry("hippo_register_reviewers")

    def appliers(self) -> list[Applier]:
        """The appliers a confirmed change goes through, in order: hippo's own ``note``
        first, then the others as registered (the first under a name wins)."""
        found = self._registry("hippo_register_appliers")
        note = found.pop("note", None)
        return ([note] if note is not None else []) + list(found.values())

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

    def pass_gate(self, workspace: Workspace, pass_: Any, chunk: Any) -> str | None:
        """Why ``pass_`` does not run over ``chunk``, from the first plugin that says, or
        None when it runs."""
        for impl in self._impls("hippo_pass_gate"):
            self._calling = impl.plugin_name
            answer = self._call_one(
                impl, "hippo_pass_gate", workspace=workspace, pass_=pass_, chunk=chunk
            )
            if answer is not None:
                return str(answer)
        return None

    def verdict_refused(
        self, workspace: Workspace, item: dict[str, Any], verdict: str, by: dict[str, Any]
    ) -> str | None:
        """Why ``by`` may not give ``verdict`` on the queued proposal ``item``, from the first
        plugin that says, or None when it may."""
        for impl in self._impls("hippo_verdict_refused"):
            self._calling = impl.plugin_name
            answer = self._call_one(
                impl,
                "hippo_verdict_refused",
                workspace=workspace,
                item=item,
                verdict=verdict,
                by=by,
            )
            if answer is not None:
                return str(answer)
        return None

    def notes_left_alone(
        self, workspace: Workspace, pass_: Any, notes: list[Note]
    ) -> dict[str, tuple[str, str]]:
        """The notes of ``notes`` the per-note pass ``pass_`` leaves alone, each with the
        plugin that said so first and its reason."""
        found: dict[str, tuple[str, str]] = {}
        for impl in self._impls("hippo_notes_left_alone"):
            self._calling = impl.plugin_name
            answer = self._call_one(
                impl, "hippo_notes_left_alone", workspace=workspace, pass_=pass_, notes=notes
            )
            if answer is None:
                continue
            if not isinstance(answer, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in answer.items()
            ):
                origin = self._origin(impl.plugin_name).origin
                raise HippoError(
                    f"plugin {origin} answered hippo_notes_left_alone with "
                    f"{type(answer).__name__}; it returns a dict of note path to a reason"
                )
            for path, why in answer.items():
                found.setdefault(path, (impl.plugin_name, why))
        return found

    def _call_one(self, impl: Any, hook: str, **kwargs: Any) -> Any:
        try:
            return impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
        except HippoError:
            raise
        except Exception as exc:
            origin = self._origin(impl.plugin_name).origin
            raise HippoError(
                f"plugin {origin} failed in {hook}: {type(exc).__name__}: {exc}"
            ) from exc

    def eval_runners(self) -> dict[str, Any]:
        """The eval runners plugins register, by the pack whose cases each runs."""
        return self._registry("hippo_register_eval_runners", named=True)

    def settings_tables(self) -> dict[str, type]:
        """The settings tables plugins own, by name; the first registered wins."""
        return self._registry("hippo_register_settings", named=True)

    def local_paths(self, workspace: Workspace) -> list[str]:
        """Workspace paths plugins write that are machine state (git-ignored)."""
        lists = self._collect("hippo_local_paths", workspace=workspace)
        return [path for paths in lists for path in paths]


#: The hooks where plugins register things by name: ``(hook, what it registers, whether
#: the name is the first argument of register rather than the thing's ``name``)``.
_NAMED_HOOKS = (
    ("hippo_register_readers", "reader", True),
    ("hippo_register_kinds", "kind", False),
    ("hippo_register_validators", "validator", False),
    ("hippo_register_reviewers", "reviewer", False),
    ("hippo_register_appliers", "applier", False),
    ("hippo_register_backends", "backend", True),
    ("hippo_register_agents", "agent", False),
    ("hippo_register_tools", "tool", False),
)


def _raised_by_plugin(error: HippoError) -> bool:
    """Whether ``error`` wraps what a plugin's own code raised (not hippo's word)."""
    return error.__cause__ is not None and not isinstance(error.__cause__, HippoError)


def _job_name(name: object) -> bool:
    """A schedule job's name: lower-case ASCII letters, digits and ``-``, from a letter, and
    not ``dream`` (hippo's own job). Checked without ``re``: this module is on the hot path."""
    if not isinstance(name, str) or not name or not name.isascii() or name == "dream":
        return False
    return name[0].isalpha() and name.islower() and name.replace("-", "").isalnum()


def _rank(impl: Any) -> int:
    # pluggy lists implementations as trylast, then the rest as registered, then tryfirst.
    return 0 if impl.tryfirst else 2 if impl.trylast else 1


_loaded: Plugins | None = None


def load_plugins(*, hot: bool = False) -> Plugins:
    """The loaded plugins, a :class:`Plugins`, loaded on first use and kept for the life of
    the process.

    ``hot`` asks for the hot path's load (no pluggy import) when nothing is loaded yet.
    """
    global _loaded
    if _loaded is None:
        _loaded = _load_hot() if hot else _load()
    return _loaded


def reset_plugins() -> None:
    """Forget the loaded plugins, so the next :func:`load_plugins` loads them again."""
    global _loaded
    _loaded = None


def _load() -> Plugins:
    import pluggy

    pm = pluggy.PluginManager("hippo")
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(pm)
    for module_name in DEFAULT_PLUGINS:
        pm.register(import_module(module_name), name=module_name)
        plugins.origins[module_name] = PluginInfo(
            module_name, DISTRIBUTION, __version__, builtin=True
        )
    pm.check_pending()
    for point in _entry_points():
        try:
            pm.register(point.load(), name=point.name)
            pm.check_pending()
        except Exception as exc:
            if pm.has_plugin(point.name):
                pm.unregister(name=point.name)
            _skipped(plugins, point, exc)
            continue
        plugins.origins[point.name] = PluginInfo(point.name, point.distribution, point.version)
    return plugins


def _load_hot() -> Plugins:
    """The same plugins as :func:`_load`, read without pluggy; pluggy's load if one of them
    (or a hook) is of a shape only pluggy reads right."""
    from hippo_core.plugins import hot

    plugins = Plugins()
    for name in DEFAULT_PLUGINS:
        plugins.origins[name] = PluginInfo(name, DISTRIBUTION, __version__, builtin=True)
    try:
        hooks = _specs()
        for point in _entry_points():
            found = hot.implementations(point.load(), point.name, hooks)
            plugins.read[point.name] = list(found)
            plugins.origins[point.name] = PluginInfo(point.name, point.distribution, point.version)
    except Exception:  # GiveWay, or a plugin that fails to import: pluggy says it as it should
        return _load()
    return plugins


_SPECS: dict[str, tuple[str, ...]] = {}


def hook_names() -> list[str]:
    """Every hook's name, sorted."""
    return sorted(_specs())


def _specs() -> dict[str, tuple[str, ...]]:
    """The hooks and their arguments, as the hot path reads them from the hookspecs."""
    if not _SPECS:
        from hippo_core.plugins import hot

        _SPECS.update(hot.specs(hookspecs))
    return _SPECS


def _entry_points() -> list[Any]:
    """The third-party entry points ``HIPPO_LOAD_PLUGINS`` lets in, built-ins' names left out."""
    allowed = os.environ.get("HIPPO_LOAD_PLUGINS")
    if allowed is not None and not allowed.strip():
        return []
    from hippo_core.plugins.entry_points import entry_points

    wanted = _wanted(allowed)
    return [
        point
        for point in entry_points(ENTRY_POINT_GROUP)
        if wanted(point.name, point.distribution) and point.name not in DEFAULT_PLUGINS
    ]


def _skipped(plugins: Plugins, point: Any, exc: Exception) -> None:
    error = f"{type(exc).__name__}: {exc}" + _hook_hint(str(exc))
    sys.stderr.write(
        f"hippo: plugin {point.name} from {point.distribution} {point.version} was skipped: "
        f"{error}\n"
    )
    plugins.broken.append(PluginInfo(point.name, point.distribution, point.version, error=error))


def _hook_hint(message: str) -> str:
    """`` - did you mean 'hippo_register_validators'?`` for pluggy's unknown hook."""
    import difflib
    import re

    found = re.search(r"unknown hook '([^']+)'", message)
    if found is None:
        return ""
    close = difflib.get_close_matches(found.group(1), list(_specs()), n=1, cutoff=0.6)
    return f" - did you mean '{close[0]}'?" if close else ""


def _wanted(allowed: str | None) -> Callable[[str, str], bool]:
    if allowed is None:
        return lambda name, dist: True
    names = {part.strip() for part in allowed.split(",") if part.strip()}
    return lambda name, dist: name in names or dist in names
