"""hippo's own commands, registered through ``hippo_register_commands`` as a plugin's are.

Each is a name, where the command lives (imported only when it runs) and the sentence
``hippo --help`` shows for it, in the order ``hippo --help`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable

from hippo_core.plugins.manager import hookimpl

COMMANDS = (
    ("init", "init:init", "Set up a workspace in the current folder, or complete one."),
    ("context", "context:context", "Print the context block for the start of an agent session."),
    ("doctor", "doctor:doctor", "Check the workspace: settings, notes, budgets, plugins and git."),
    (
        "plugins",
        "plugins:plugins",
        "List the plugins: name, version, the hooks each implements and the commands it adds.",
    ),
    (
        "ingest",
        "ingest:ingest",
        "Index new transcript turns from every agent into $HIPPO_HOME/index.sqlite.",
    ),
    (
        "search",
        "search:search",
        "Search the indexed turns and print the best matches with snippets.",
    ),
    ("log", "log:log", "Write the session log (log_path), one line per session, newest first."),
    (
        "dream",
        "dream:dream",
        "Check notes against transcripts and fold in what sessions learned, with review.",
    ),
    (
        "revert",
        "revert:revert",
        "Put a note back as it was before a dreamed change, with a revert receipt.",
    ),
    (
        "review",
        "review:review",
        "List proposals and drafts waiting for a verdict, show one, or decide it.",
    ),
    ("config", "config:app", "Read and change workspace settings."),
    ("notes", "notes:app", "Work with the notes."),
    ("session", "session:app", "Declare agent sessions and record how they ended."),
    (
        "hook",
        "hook:app",
        "Run by an agent's session hooks: read the hook's JSON on stdin. Always exits 0.",
    ),
    ("hooks", "hooks:app", "Install or remove hippo's hooks in an agent's settings."),
    (
        "mcp",
        "mcp:app",
        "Serve hippo's tools to an agent over MCP (stdio), or register the server in its config.",
    ),
    (
        "schedule",
        "schedule:app",
        "Run hippo dream (and the jobs plugins add) on a clock: launchd on macOS, systemd on "
        "Linux, else cron.",
    ),
    ("pack", "pack:app", "List, install, update and write packs."),
    ("registry", "registry:app", "Check the registry indexes packs are published in."),
    ("eval", "eval:app", "Measure packs on recorded cases, and the memory of this workspace."),
)


@hookimpl
def hippo_register_commands(register: Callable[[str, str, str], None]) -> None:
    for name, target, help_text in COMMANDS:
        register(name, f"hippo_core.cli.{target}", help_text)
