"""hippo: memory with a review trail for coding agents.

The public API, for plugins and scripts: every name a plugin may import, and the only names
hippo's own packs import (``tests/test_layers.py`` holds them to it). The plugin chapter of
the manual (``docs/plugins.md``) lists them by what a plugin does with them; the hooks are
documented in :mod:`hippo_core.plugins.hookspecs`. Any other module of ``hippo_core`` is hippo's
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

    from hippo_core.actions.forget import forget_text
    from hippo_core.actions.review import review_items
    from hippo_core.agents.deciders import acting_now, at_terminal, describe_decider, same_author
    from hippo_core.agents.env import without_agent
    from hippo_core.agents.sessions import session_records
    from hippo_core.base.clock import now, utc_now
    from hippo_core.base.errors import HippoError, UsageError
    from hippo_core.base.findings import Finding
    from hippo_core.base.outbound import outbound_opener, outbound_url_problem, shown_url
    from hippo_core.base.terminal import labelled, printable
    from hippo_core.cli.common import (
        JSON_OPTION,
        command_group,
        current_workspace,
        print_json,
        subcommand,
    )
    from hippo_core.context.budget import ContextBlock, ContextPart, OverBudget
    from hippo_core.context.build import build_context
    from hippo_core.context.watch import keep_fresh
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
    from hippo_core.files.atomic import atomic_write
    from hippo_core.files.jsonfiles import json_objects_in, read_json_object
    from hippo_core.files.locks import file_lock
    from hippo_core.files.owner_only import owner_only_append, owner_only_write
    from hippo_core.files.processes import process_alive
    from hippo_core.mcp.server import mcp_server
    from hippo_core.notes.edit import EditError, note_digest
    from hippo_core.notes.note import Note
    from hippo_core.notes.text import split_frontmatter
    from hippo_core.packs.evals import case_folder
    from hippo_core.packs.evals_case import CaseError
    from hippo_core.packs.evals_replay import Metered, Recording, Replay, read_recording
    from hippo_core.packs.evals_result import CaseResult
    from hippo_core.packs.running import load_packs
    from hippo_core.plugins.agent import Agent
    from hippo_core.plugins.events import Event
    from hippo_core.plugins.manager import Plugins, load_plugins
    from hippo_core.plugins.markers import hookimpl
    from hippo_core.plugins.tools import Tool, ToolArguments
    from hippo_core.settings.tables import settings_table, update_settings
    from hippo_core.settings.values import Settings
    from hippo_core.transcripts.model import Parsed, Resume, SessionInfo, TranscriptSource, Turn
    from hippo_core.transcripts.privacy import redact_text
    from hippo_core.workspace.folder import Workspace

#: The public API, the one list of it: each section of docs/plugins.md ("The public API"),
#: the modules its names live in, and the names. ``__all__`` and the lazy lookup below are
#: made from it, docs/gen_api.py writes the page's tables from it, and the tests read it;
#: the TYPE_CHECKING imports above name the same (for type checkers; a test holds them to it).
_API: dict[str, dict[str, tuple[str, ...]]] = {
    "Hooks and markers": {
        "hippo_core.plugins.markers": ("hookimpl",),
        "hippo_core.plugins.manager": ("load_plugins", "Plugins"),
        "hippo_core.plugins.events": ("Event",),
        "hippo_core.base.errors": ("HippoError", "UsageError"),
        "hippo_core.version": ("__version__",),
    },
    "The workspace and its settings": {
        "hippo_core.workspace.folder": ("Workspace",),
        "hippo_core.settings.values": ("Settings",),
        "hippo_core.settings.tables": ("settings_table", "update_settings"),
        "hippo_core.agents.sessions": ("session_records",),
    },
    "Files and processes": {
        "hippo_core.files.atomic": ("atomic_write",),
        "hippo_core.files.owner_only": ("owner_only_write", "owner_only_append"),
        "hippo_core.files.locks": ("file_lock",),
        "hippo_core.files.jsonfiles": ("read_json_object", "json_objects_in"),
        "hippo_core.files.processes": ("process_alive",),
        "hippo_core.base.clock": ("now", "utc_now"),
        "hippo_core.transcripts.privacy": ("redact_text",),
    },
    "Notes and the context block": {
        "hippo_core.notes.note": ("Note",),
        "hippo_core.notes.edit": ("note_digest", "EditError"),
        "hippo_core.notes.text": ("split_frontmatter",),
        "hippo_core.context.watch": ("keep_fresh",),
        "hippo_core.context.budget": ("ContextPart", "ContextBlock", "OverBudget"),
        "hippo_core.context.build": ("build_context",),
        "hippo_core.base.findings": ("Finding",),
    },
    "The dream's model types": {
        "hippo_core.dream.model": (
            "Reader",
            "ReadContext",
            "Item",
            "TurnText",
            "SessionView",
            "Chunk",
            "Pass",
            "ProposalKind",
            "Proposal",
            "Evidence",
            "Validator",
            "CheckContext",
            "Reviewer",
            "ReviewRequest",
            "Verdict",
            "Applier",
            "Change",
            "ModelBackend",
            "Reply",
            "Call",
            "ModelUnreachable",
        ),
    },
    "Applying changes, with receipts and snapshots": {
        "hippo_core.dream.apply": ("settle", "Settled", "reconcile"),
        "hippo_core.dream.receipts": (
            "record_proposal",
            "proposal_record",
            "receipt_record",
            "purge_note_history",
            "new_id",
        ),
        "hippo_core.actions.forget": ("forget_text",),
        "hippo_core.actions.review": ("review_items",),
    },
    "Who acts and who decides": {
        "hippo_core.agents.deciders": (
            "describe_decider",
            "at_terminal",
            "acting_now",
            "same_author",
        ),
        "hippo_core.agents.env": ("without_agent",),
    },
    "Rendering prompts": {
        "hippo_core.packs.running": ("load_packs",),
        "hippo_core.dream.render": ("render_prompt",),
        "hippo_core.dream.blocks": ("quoted_field", "token_field", "as_material"),
    },
    "Model backends": {
        "hippo_core.dream.backends": ("OpenAIBackend", "api_key_from_env"),
    },
    "Outbound requests": {
        "hippo_core.base.outbound": ("outbound_opener", "outbound_url_problem", "shown_url"),
    },
    "MCP tools": {
        "hippo_core.plugins.tools": ("Tool", "ToolArguments"),
        "hippo_core.mcp.server": ("mcp_server",),
    },
    "CLI helpers for plugin commands": {
        "hippo_core.cli.common": (
            "command_group",
            "subcommand",
            "JSON_OPTION",
            "print_json",
            "current_workspace",
        ),
        "hippo_core.base.terminal": ("labelled", "printable"),
    },
    "Evals": {
        "hippo_core.packs.evals": ("case_folder",),
        "hippo_core.packs.evals_result": ("CaseResult",),
        "hippo_core.packs.evals_case": ("CaseError",),
        "hippo_core.packs.evals_replay": ("Metered", "Recording", "Replay", "read_recording"),
    },
    "Agents and their transcripts": {
        "hippo_core.plugins.agent": ("Agent",),
        "hippo_core.transcripts.model": (
            "TranscriptSource",
            "Parsed",
            "Resume",
            "SessionInfo",
            "Turn",
        ),
    },
}
_MODULE_OF = {
    name: module for homes in _API.values() for module, names in homes.items() for name in names
}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'hippo_core' has no attribute {name!r}")
    import sys

    __import__(module)  # importlib.import_module would cost the hot path its import
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})
