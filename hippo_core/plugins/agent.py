"""What hippo knows of one coding agent, as a plugin registers it: :class:`Agent`.

Every agent hippo works with, its own four with hooks (Claude Code, Codex, Gemini CLI,
OpenCode) and the three it only reads (Command Code, dsh, muse), is a plugin that registers
one ``Agent`` through ``hippo_register_agents``; the kernel loops over the registered agents
and names none. A value of plain fields and functions, built on the hot path's
:class:`~hippo_core.base.records.Record` (no :mod:`dataclasses`): the hooks read an agent's
``session_prefix`` and ``hook_output``. Imports nothing at run time.
"""

from __future__ import annotations

from hippo_core.base.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path
    from typing import Any

    from hippo_core.transcripts.model import TranscriptSource

#: hippo's hooks (``hippo hook EVENT``), which an agent's events are mapped to.
HOOKS = ("session-start", "prompt", "session-end", "compact")
#: The unit of a handler's timeout is the agent's; this is 30 seconds in hippo's.
TIMEOUT_SECONDS = 30


def mcp_command(argv: list[str]) -> dict[str, Any]:
    """The MCP server entry most agents read: ``{"command": ..., "args": [...]}``."""
    return {"command": argv[0], "args": argv[1:]}


class Agent(Record):
    """One coding agent: its name and what hippo does with it. Only ``name`` is required;
    an agent without ``hooks_file`` has no hooks to install, one without ``mcp_file`` no
    MCP config to write, one without ``sources`` no transcripts to read.

    - ``name``: the tool name, in ``hippo hook EVENT --tool NAME``, ``hippo hooks install
      NAME``, ``hippo mcp install NAME``, the index and the session records.
    - ``sources()``: its transcript sources (called by ``hippo ingest``; import them there).
    - ``hooks_file(user, project)``: the settings file ``hippo hooks install`` writes, in
      the schema Claude Code, Codex and Gemini CLI share (event -> matcher groups ->
      handlers). ``hook_events`` maps the agent's events to hippo's hooks; ``compact_events``
      the one before it compacts its context, installed when the workspace dreams on
      compaction. ``hook_timeout`` is the handler's timeout in the agent's unit,
      ``hook_timeouts`` the events whose timeout differs; ``named_handlers`` gives each
      handler a ``name`` (``hippo-prompt``).
    - ``hook_plugin(argv)``: for an agent that runs no shell hooks, the text of the plugin
      file hippo writes at ``hooks_file`` instead (``argv`` runs hippo); its first line
      marks the file hippo's. ``plugin_event`` names what the plugin handles, ``plugin_said``
      what the file does, in ``hippo hooks install``'s line.
    - ``hooks_problem(path, project)``: why the agent would not run hippo's hooks in
      ``path`` (``project`` None for the user's), or None: ``hippo doctor`` warns with it
      and ``hippo hooks install`` notes it.
    - ``session_prefix``: what the agent's session ids get in hippo's records
      (``codex-<thread id>``); its sources must name sessions the same way.
    - ``hook_output``: ``text`` (the block as is) or ``json`` (Gemini CLI's
      ``hookSpecificOutput``, naming the agent's event); ``fresh_resume``: a resumed
      session has lost what session-start printed, so it prints again.
    - ``mcp_file(user, project)``: its MCP config, JSON or (by its suffix) TOML;
      ``mcp_servers`` the key holding the servers; ``mcp_entry(argv)`` hippo's entry (by
      default ``{"command": argv[0], "args": argv[1:]}``);
      ``mcp_note`` what the agent asks of a project's server, said after installing one.
    - ``env_marks``: ``(variable, values)`` pairs by which the agent marks what it runs (any
      non-empty value when ``values`` is empty); ``session_variable`` names its session.
    """

    __slots__ = (
        "name",
        "sources",
        "hooks_file",
        "hook_events",
        "compact_events",
        "hook_timeout",
        "hook_timeouts",
        "named_handlers",
        "hook_plugin",
        "plugin_event",
        "plugin_said",
        "hooks_problem",
        "session_prefix",
        "hook_output",
        "fresh_resume",
        "mcp_file",
        "mcp_servers",
        "mcp_entry",
        "mcp_note",
        "env_marks",
        "session_variable",
    )
    name: str
    sources: Callable[[], Iterable[TranscriptSource]] | None
    hooks_file: Callable[[bool, Path], Path] | None
    hook_events: Mapping[str, str]
    compact_events: Mapping[str, str]
    hook_timeout: int
    hook_timeouts: Mapping[str, int]
    named_handlers: bool
    hook_plugin: Callable[[list[str]], str] | None
    plugin_event: str
    plugin_said: str
    hooks_problem: Callable[[Path, Path | None], str | None] | None
    session_prefix: str
    hook_output: str
    fresh_resume: bool
    mcp_file: Callable[[bool, Path], Path] | None
    mcp_servers: str
    mcp_entry: Callable[[list[str]], dict[str, Any]]
    mcp_note: str
    env_marks: tuple[tuple[str, tuple[str, ...]], ...]
    session_variable: str

    def __init__(
        self,
        name: str,
        *,
        sources: Callable[[], Iterable[TranscriptSource]] | None = None,
        hooks_file: Callable[[bool, Path], Path] | None = None,
        hook_events: Mapping[str, str] | None = None,
        compact_events: Mapping[str, str] | None = None,
        hook_timeout: int = TIMEOUT_SECONDS,
        hook_timeouts: Mapping[str, int] | None = None,
        named_handlers: bool = False,
        hook_plugin: Callable[[list[str]], str] | None = None,
        plugin_event: str = "",
        plugin_said: str = "",
        hooks_problem: Callable[[Path, Path | None], str | None] | None = None,
        session_prefix: str | None = None,
        hook_output: str = "text",
        fresh_resume: bool = False,
        mcp_file: Callable[[bool, Path], Path] | None = None,
        mcp_servers: str = "mcpServers",
        mcp_entry: Callable[[list[str]], dict[str, Any]] | None = None,
        mcp_note: str = "",
        env_marks: tuple[tuple[str, tuple[str, ...]], ...] = (),
        session_variable: str = "",
    ) -> None:
        self._set(
            name=name,
            sources=sources,
            hooks_file=hooks_file,
            hook_events=dict(hook_events or {}),
            compact_events=dict(compact_events or {}),
            hook_timeout=hook_timeout,
            hook_timeouts=dict(hook_timeouts or {}),
            named_handlers=named_handlers,
            hook_plugin=hook_plugin,
            plugin_event=plugin_event,
            plugin_said=plugin_said,
            hooks_problem=hooks_problem,
            session_prefix=f"{name}-" if session_prefix is None else session_prefix,
            hook_output=hook_output,
            fresh_resume=fresh_resume,
            mcp_file=mcp_file,
            mcp_servers=mcp_servers,
            mcp_entry=mcp_entry or mcp_command,
            mcp_note=mcp_note,
            env_marks=tuple(env_marks),
            session_variable=session_variable,
        )

    def __hash__(self) -> int:
        return hash(self.name)  # its tables are dicts: the name is what tells agents apart

    @property
    def has_hooks(self) -> bool:
        """Whether ``hippo hooks install`` has something to write for it."""
        return self.hooks_file is not None and bool(self.hook_events or self.hook_plugin)

    def agent_event(self, hook: str) -> str:
        """The agent's event that runs hippo's ``hook`` (Gemini CLI's ``BeforeAgent`` for
        ``prompt``), or ``hook`` itself when none does."""
        for event, name in {**self.hook_events, **self.compact_events}.items():
            if name == hook:
                return event
        return hook

    def check(self) -> str:
        """What is wrong with the agent as registered, in words; empty when nothing is."""
        if not isinstance(self.name, str) or not _tool_name(self.name):
            return "its name is lower-case letters, digits and -, from a letter"
        for event, hook in {**self.hook_events, **self.compact_events}.items():
            if hook not in HOOKS:
                return f"its event {event!r} runs {hook!r}, which is none of {', '.join(HOOKS)}"
        if self.hook_output not in ("text", "json"):
            return f"hook_output is {self.hook_output!r}, not text or json"
        if (self.hook_events or self.hook_plugin) and self.hooks_file is None:
            return "it has hook events but no hooks_file to write them to"
        return ""


def _tool_name(name: str) -> bool:
    """An agent's name: lower-case ASCII letters, digits and ``-``, from a letter (checked
    without ``re``: the hooks read agents)."""
    return (
        bool(name)
        and name.isascii()
        and name[0].isalpha()
        and name == name.lower()
        and name.replace("-", "").isalnum()
    )
