"""The public API: what `hippo_core` exports is deliberate, documented and lazy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import hippo_core

DOCS = Path(__file__).parent.parent / "docs" / "plugins.md"

#: The API by what a plugin does with it, as docs/plugins.md lists it.
PUBLIC = {
    "hooks and markers": [
        "Event",
        "HippoError",
        "Plugins",
        "UsageError",
        "__version__",
        "hookimpl",
        "load_plugins",
    ],
    "the workspace and its settings": [
        "Settings",
        "Workspace",
        "session_records",
        "settings_table",
        "update_settings",
    ],
    "files and processes": [
        "atomic_write",
        "file_lock",
        "json_objects_in",
        "now",
        "owner_only_append",
        "owner_only_write",
        "process_alive",
        "read_json_object",
        "redact_text",
        "utc_now",
    ],
    "notes and the context block": [
        "ContextBlock",
        "ContextPart",
        "EditError",
        "Finding",
        "Note",
        "OverBudget",
        "build_context",
        "keep_fresh",
        "note_digest",
        "split_frontmatter",
    ],
    "the dream's model types": [
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
        "ReviewRequest",
        "Reviewer",
        "SessionView",
        "TurnText",
        "Validator",
        "Verdict",
    ],
    "applying changes, with receipts and snapshots": [
        "Settled",
        "describe_decider",
        "forget_text",
        "new_id",
        "proposal_record",
        "purge_note_history",
        "receipt_record",
        "reconcile",
        "record_proposal",
        "review_items",
        "settle",
    ],
    "rendering prompts": [
        "as_material",
        "load_packs",
        "quoted_field",
        "render_prompt",
        "token_field",
    ],
    "model backends": ["OpenAIBackend", "api_key_from_env"],
    "outbound requests": ["outbound_opener", "outbound_url_problem", "shown_url"],
    "mcp tools": ["Tool", "ToolArguments", "mcp_server"],
    "cli helpers for plugin commands": [
        "JSON_OPTION",
        "command_group",
        "current_workspace",
        "print_json",
        "printable",
        "subcommand",
    ],
    "evals": [
        "CaseError",
        "CaseResult",
        "Metered",
        "Recording",
        "Replay",
        "case_folder",
        "read_recording",
    ],
    "transcript sources": ["Parsed", "Resume", "SessionInfo", "TranscriptSource", "Turn"],
}


def test_all_is_the_public_api() -> None:
    every = sorted(name for names in PUBLIC.values() for name in names)
    assert sorted(hippo_core.__all__) == every
    assert set(dir(hippo_core)) >= set(every)
    for name in hippo_core.__all__:
        assert getattr(hippo_core, name) is not None


def sections() -> dict[str, str]:
    """The subsections of docs/plugins.md's "The public API", by lower-case title."""
    text = DOCS.read_text(encoding="utf-8")
    api = text.split("\n## The public API\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for part in api.split("\n### ")[1:]:
        title, _, body = part.partition("\n")
        found[title.strip().lower()] = body
    return found


def test_the_plugin_chapter_lists_every_name_where_it_belongs() -> None:
    documented = sections()
    assert list(documented) == list(PUBLIC)
    for title, names in PUBLIC.items():
        body = documented[title]
        for name in names:
            if name == "__version__":
                continue
            assert re.search(rf"`{re.escape(name)}[`(]", body), f"{name} is not in '{title}'"


def test_importing_the_api_imports_none_of_it() -> None:
    """`import hippo_core` loads no module the names live in, until a name is used."""
    probe = (
        "import sys, hippo_core\n"
        "print(sorted(m for m in sys.modules if m.startswith('hippo_')))\n"
        "hippo_core.Workspace\n"
        "print('hippo_core.workspace' in sys.modules)\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert found == ["['hippo_core', 'hippo_core.version']", "True"]
