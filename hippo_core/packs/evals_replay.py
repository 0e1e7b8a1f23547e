"""The model side of ``hippo eval``: every call metered, and recorded or replayed.

A recording is ``eval/<case>/recorded.json``::

    {"version": 1, "calls": [{"system": ..., "prompt": ..., "reply": ...}]}

with the case workspace's absolute path written as ``{{workspace}}`` in ``system`` and
``prompt``, so that a replay in another temporary folder finds the same calls.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError
from hippo_core.dream.model import Call, ModelBackend, ModelUnreachable, Reply
from hippo_core.packs.evals_case import WORKSPACE

if TYPE_CHECKING:
    from hippo_core.dream.model import Pass
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

VERSION = 1
AGAIN = "run hippo eval pack with --record again"


def generic(text: str, root: Path) -> str:
    """``text`` with the workspace's path (as is, and JSON-escaped) as ``{{workspace}}``."""
    forms = {str(root), json.dumps(str(root))[1:-1]}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, WORKSPACE)
    return text


def configured(workspace: Workspace, plugins: Plugins) -> ModelBackend:
    """The backend that ``model_backend`` names, as ``hippo dream`` would use it."""
    name = workspace.settings.model_backend
    factories = plugins.backends()
    if name not in factories:
        raise HippoError(
            f"model_backend {name!r} is not a backend here; use one of: "
            + ", ".join(sorted(factories))
        )
    return factories[name](workspace)


@dataclass
class Metered:
    """Passes calls on, adding up their number, bytes and seconds."""

    inner: ModelBackend
    calls: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    seconds: float = 0.0
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        reply = self.inner.complete(prompt, system=system, json_schema=json_schema)
        self.calls += 1
        self.bytes_in += reply.call.bytes_in
        self.bytes_out += reply.call.bytes_out
        self.seconds += reply.call.seconds
        return reply


@dataclass
class Recording:
    """Calls the model and keeps every call for ``recorded.json``.

    A reply too large to read is kept as an empty one: both count as no proposal and as a
    rejection.
    """

    inner: ModelBackend
    root: Path
    calls: list[dict[str, Any]] = field(default_factory=list)
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        reply = self.inner.complete(prompt, system=system, json_schema=json_schema)
        self.calls.append(
            {
                "system": None if system is None else generic(system, self.root),
                "prompt": generic(prompt, self.root),
                "reply": reply.text,
            }
        )
        return reply

    def recording(self) -> str:
        return json.dumps({"version": VERSION, "calls": self.calls}, indent=2) + "\n"


@dataclass
class Replay:
    """Answers each call with the reply recorded for exactly its system prompt and prompt.

    The same call made again gets the next reply recorded for it (the last one once they
    are used up). A call with no recording raises :class:`ModelUnreachable`: the case
    fails rather than meeting a model that may answer differently.
    """

    calls: list[dict[str, Any]]
    root: Path
    shown: str
    """``eval/<case>/recorded.json``, for messages."""
    passes: list[Pass]
    name: str = "replay"
    _used: defaultdict[tuple[str | None, str], int] = field(
        default_factory=lambda: defaultdict(int)
    )

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        """``json_schema`` is not part of the key: the prompt says what was asked."""
        key = (None if system is None else generic(system, self.root), generic(prompt, self.root))
        replies = [c["reply"] for c in self.calls if (c["system"], c["prompt"]) == key]
        if not replies:
            count = f"{len(self.calls)} recorded call{'s' if len(self.calls) != 1 else ''}"
            raise ModelUnreachable(
                f"replay: {self._what(system, prompt)} is not among the {count} of "
                f"{self.shown} (the prompt changed since the recording); {AGAIN}"
            )
        text = replies[min(self._used[key], len(replies) - 1)]
        self._used[key] += 1
        from hippo_core.dream.backends import marked

        # What a live call counts: the prompt as a backend sends it, and the system prompt.
        size = len(marked(prompt).encode("utf-8")) + len((system or "").encode("utf-8"))
        return Reply(text, Call(self.name, size, len(text.encode("utf-8")), 0.0))

    def _what(self, system: str | None, prompt: str) -> str:
        """Which pass sent the call, when its persona or its prompt's first line shows it."""
        from hippo_core.dream.packs import read_persona

        for pass_ in self.passes:
            if system is not None and system == read_persona(pass_):
                return f"the reviewer's prompt of {pass_.key}"
            if (marker := _first_line(pass_)) and marker in prompt:
                return f"a prompt of {pass_.key}"
        return "a reviewer's prompt" if system is not None else "a prompt"


def _first_line(pass_: Pass) -> str:
    try:
        text = (pass_.root / pass_.prompt).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return next((line for line in text.splitlines() if line.strip()), "")


def read_recording(path: Path, shown: str) -> list[dict[str, Any]]:
    """The calls of ``recorded.json``; a missing or unreadable one is one line saying so."""
    if not path.is_file():
        raise HippoError(f"{shown} does not exist; run hippo eval pack with --record first")
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise HippoError(f"{shown}: not readable JSON ({exc}); {AGAIN}") from None
    calls = value.get("calls") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or value.get("version") != VERSION
        or not isinstance(calls, list)
    ):
        raise HippoError(f'{shown}: not a recording of version {VERSION} with "calls"; {AGAIN}')
    for number, call in enumerate(calls, 1):
        if not (
            isinstance(call, dict)
            and isinstance(call.get("system"), str | None)
            and isinstance(call.get("prompt"), str)
            and isinstance(call.get("reply"), str)
        ):
            raise HippoError(
                f"{shown}: call {number} needs a system (text or null), a prompt and a "
                f"reply (text); {AGAIN}"
            )
    return calls
