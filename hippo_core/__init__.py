"""hippo: memory with a review trail for coding agents.

The public API, for plugins and scripts: every name a plugin may import, and the only names
hippo's own packs import (``tests/test_layers.py`` holds them to it). The plugin chapter of
the manual (``docs/plugins.md``) lists them by what a plugin does with them; the hooks are
documented in :mod:`hippo_core.hookspecs`. Any other module of ``hippo_core`` is hippo's
own and may change in any release.

Every name is imported on first use (a module ``__getattr__``), so ``import hippo_core``
costs next to nothing: an agent's hooks import the package on every prompt.
"""

from __future__ import annotations

from hippo_core.version import __version__

# Not typing.TYPE_CHECKING: importing typing costs the agent's hooks a few milliseconds.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hippo_core.atomic import atomic_write
    from hippo_core.budget import ContextBlock, ContextPart, OverBudget
    from hippo_core.cli.common import (
        JSON_OPTION,
        command_group,
        current_workspace,
        print_json,
        subcommand,
    )
    from hippo_core.clock import now, utc_now
    from hippo_core.context import build_context
    from hippo_core.deciders import describe_decider
    from hippo_core.dream.apply import Settled, reconcile, settle
    from hippo_core.dream.backends import OpenAIBackend, api_key_from_env
    from hippo_core.dream.blocks import as_material, quoted_field, token_field
    from hippo_core.dream.model import (
        Applier,
        Call,
        Change,
        CheckContext,
        Chunk,
        Evidence,
        Item,
        ModelBackend,
        ModelUnreachable,
        Pass,
        Proposal,
        ProposalKind,
        ReadContext,
        Reader,
        Reply,
        Reviewer,
        ReviewRequest,
        SessionView,
        TurnText,
        Validator,
        Verdict,
    )
    from hippo_core.dream.receipts import (
        new_id,
        proposal_record,
        purge_note_history,
        receipt_record,
        record_proposal,
    )
    from hippo_core.dream.render import render_prompt
    from hippo_core.errors import HippoError, UsageError
    from hippo_core.events import Event
    from hippo_core.findings import Finding
    from hippo_core.forgetting import forget_text
    from hippo_core.jsonfiles import json_objects_in, read_json_object
    from hippo_core.locks import file_lock
    from hippo_core.markers import hookimpl
    from hippo_core.mcp.server import mcp_server
    from hippo_core.mcp.tool import Tool, ToolArguments
    from hippo_core.notes.edit import EditError, note_digest
    from hippo_core.notes.note import Note
    from hippo_core.notes.text import split_frontmatter
    from hippo_core.notes.watch import keep_fresh
    from hippo_core.outbound import outbound_opener, outbound_url_problem, shown_url
    from hippo_core.owner_only import owner_only_append, owner_only_write
    from hippo_core.packs.evals import case_folder
    from hippo_core.packs.evals_case import CaseError
    from hippo_core.packs.evals_replay import Metered, Recording, Replay, read_recording
    from hippo_core.packs.evals_result import CaseResult
    from hippo_core.packs.running import load_packs
    from hippo_core.plugin_settings import settings_table, update_settings
    from hippo_core.plugins import Plugins, load_plugins
    from hippo_core.processes import process_alive
    from hippo_core.review import review_items
    from hippo_core.sessions import session_records
    from hippo_core.settings import Settings
    from hippo_core.terminal import printable
    from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
    from hippo_core.transcripts.privacy import redact_text
    from hippo_core.workspace import Workspace

#: Where each public name lives, grouped as docs/plugins.md lists them.
_HOMES = {
    # Hooks and markers.
    "hippo_core.markers": ("hookimpl",),
    "hippo_core.plugins": ("Plugins", "load_plugins"),
    "hippo_core.events": ("Event",),
    "hippo_core.errors": ("HippoError", "UsageError"),
    # The workspace and its settings.
    "hippo_core.workspace": ("Workspace",),
    "hippo_core.settings": ("Settings",),
    "hippo_core.plugin_settings": ("settings_table", "update_settings"),
    "hippo_core.sessions": ("session_records",),
    # Files and processes.
    "hippo_core.atomic": ("atomic_write",),
    "hippo_core.locks": ("file_lock",),
    "hippo_core.owner_only": ("owner_only_append", "owner_only_write"),
    "hippo_core.jsonfiles": ("json_objects_in", "read_json_object"),
    "hippo_core.processes": ("process_alive",),
    "hippo_core.clock": ("now", "utc_now"),
    "hippo_core.transcripts.privacy": ("redact_text",),
    # Notes and the context block.
    "hippo_core.notes.note": ("Note",),
    "hippo_core.notes.edit": ("EditError", "note_digest"),
    "hippo_core.notes.text": ("split_frontmatter",),
    "hippo_core.notes.watch": ("keep_fresh",),
    "hippo_core.budget": ("ContextBlock", "ContextPart", "OverBudget"),
    "hippo_core.context": ("build_context",),
    "hippo_core.findings": ("Finding",),
    # The dream's model types.
    "hippo_core.dream.model": (
        "Applier",
        "Call",
        "Change",
        "CheckContext",
        "Chunk",
        "Evidence",
        "Item",
        "ModelBackend",
        "ModelUnreachable",
        "Pass",
        "Proposal",
        "ProposalKind",
        "ReadContext",
        "Reader",
        "Reply",
        "Reviewer",
        "ReviewRequest",
        "SessionView",
        "TurnText",
        "Validator",
        "Verdict",
    ),
    # Applying changes, with receipts and snapshots.
    "hippo_core.dream.apply": ("Settled", "reconcile", "settle"),
    "hippo_core.dream.receipts": (
        "new_id",
        "proposal_record",
        "purge_note_history",
        "receipt_record",
        "record_proposal",
    ),
    "hippo_core.review": ("review_items",),
    "hippo_core.forgetting": ("forget_text",),
    "hippo_core.deciders": ("describe_decider",),
    # Rendering prompts.
    "hippo_core.dream.render": ("render_prompt",),
    "hippo_core.dream.blocks": ("as_material", "quoted_field", "token_field"),
    "hippo_core.packs.running": ("load_packs",),
    # Model backends.
    "hippo_core.dream.backends": ("OpenAIBackend", "api_key_from_env"),
    # Outbound requests.
    "hippo_core.outbound": ("outbound_opener", "outbound_url_problem", "shown_url"),
    # MCP tools.
    "hippo_core.mcp.tool": ("Tool", "ToolArguments"),
    "hippo_core.mcp.server": ("mcp_server",),
    # CLI helpers for plugin commands.
    "hippo_core.cli.common": (
        "JSON_OPTION",
        "command_group",
        "current_workspace",
        "print_json",
        "subcommand",
    ),
    "hippo_core.terminal": ("printable",),
    # Evals.
    "hippo_core.packs.evals": ("case_folder",),
    "hippo_core.packs.evals_case": ("CaseError",),
    "hippo_core.packs.evals_result": ("CaseResult",),
    "hippo_core.packs.evals_replay": ("Metered", "Recording", "Replay", "read_recording"),
    # Transcript sources.
    "hippo_core.transcripts.model": ("Parsed", "Resume", "SessionInfo", "TranscriptSource", "Turn"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'hippo_core' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


__all__ = [
    "JSON_OPTION",
    "Applier",
    "Call",
    "CaseError",
    "CaseResult",
    "Change",
    "CheckContext",
    "Chunk",
    "ContextBlock",
    "ContextPart",
    "EditError",
    "Event",
    "Evidence",
    "Finding",
    "HippoError",
    "Item",
    "Metered",
    "ModelBackend",
    "ModelUnreachable",
    "Note",
    "OpenAIBackend",
    "OverBudget",
    "Parsed",
    "Pass",
    "Plugins",
    "Proposal",
    "ProposalKind",
    "ReadContext",
    "Reader",
    "Recording",
    "Replay",
    "Reply",
    "Resume",
    "ReviewRequest",
    "Reviewer",
    "SessionInfo",
    "SessionView",
    "Settings",
    "Settled",
    "Tool",
    "ToolArguments",
    "TranscriptSource",
    "Turn",
    "TurnText",
    "UsageError",
    "Validator",
    "Verdict",
    "Workspace",
    "__version__",
    "api_key_from_env",
    "as_material",
    "atomic_write",
    "build_context",
    "case_folder",
    "command_group",
    "current_workspace",
    "describe_decider",
    "file_lock",
    "forget_text",
    "hookimpl",
    "json_objects_in",
    "keep_fresh",
    "load_packs",
    "load_plugins",
    "mcp_server",
    "new_id",
    "note_digest",
    "now",
    "outbound_opener",
    "outbound_url_problem",
    "owner_only_append",
    "owner_only_write",
    "print_json",
    "printable",
    "process_alive",
    "proposal_record",
    "purge_note_history",
    "quoted_field",
    "read_json_object",
    "read_recording",
    "receipt_record",
    "reconcile",
    "record_proposal",
    "redact_text",
    "render_prompt",
    "review_items",
    "session_records",
    "settings_table",
    "settle",
    "shown_url",
    "split_frontmatter",
    "subcommand",
    "token_field",
    "update_settings",
    "utc_now",
]
