"""The settings file's schema (pydantic) and its editing (tomlkit, comments kept).

Imported only when the settings file changed since it was last validated, or by the
commands that edit it: pydantic and tomlkit stay off the agent's hot path.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import tomlkit
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from tomlkit.exceptions import ParseError

from hippo_core.base.errors import HippoError, UsageError
from hippo_core.base.records import Record
from hippo_core.files.atomic import atomic_write
from hippo_core.settings.values import LoadedSettings, Settings


def _inside(value: str) -> str:
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ValueError("must be a relative path that stays inside the workspace")
    return value


def _markdown(value: str) -> str:
    if not value.endswith(".md"):
        raise ValueError("must name a .md file")
    return value


def _index_url(value: str) -> str:
    from hippo_core.settings.index_url import index_url_problem

    problem = index_url_problem(value)
    if problem:
        raise ValueError(problem)
    return value


RelPath = Annotated[str, AfterValidator(_inside)]
NotePath = Annotated[str, AfterValidator(_inside), AfterValidator(_markdown)]


class OpenAIModel(BaseModel):
    """The ``[openai]`` table."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    url: str = Field("http://127.0.0.1:8080/v1", description="Base URL, up to /v1.")
    model: str = Field("default", description="The model name sent with each request.")
    api_key_env: str = Field(
        "", description="Environment variable holding the API key; empty: send none."
    )
    max_tokens: int = Field(4000, gt=0, description="Most tokens a reply may have.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Keys merged into every request, such as chat_template_kwargs.",
    )


class SettingsModel(BaseModel):
    """``.hippo/settings.toml``: every key optional, every value checked."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    notes_dir: RelPath = Field("notes", description="Folder of the notes, inside the workspace.")
    entry_note: NotePath = Field("Home.md", description="Entry note, relative to notes_dir.")
    budget_bytes: int = Field(25600, gt=0, description="Context budget in UTF-8 bytes.")
    relevance: Literal["headings", "bm25", "history"] = Field(
        "headings",
        description=(
            "How `hippo context --task` ranks notes: headings (task words in the title and "
            "headings), bm25 (the whole note, stemmed) or history (bm25 with the notes past "
            "sessions of like tasks opened)."
        ),
    )
    required_notes: list[NotePath] = Field(
        default_factory=list, description="Notes named on a `required:` line of every context."
    )
    sample_tasks: list[str] = Field(
        default_factory=list, description="Tasks whose context budget `hippo doctor` checks."
    )
    risky_review: Literal["person", "pass"] = Field(
        "person",
        description=(
            "Who lands a dream's risky change (a URL, a command, a credential, the entry or a "
            "required note, evidence only from outside): person (it waits in hippo review "
            "once the pass's reviewers confirm it) or pass (the pass's reviewers alone)."
        ),
    )
    dreamed_days: int = Field(
        30,
        ge=0,
        description=(
            "Days a note a dream changed is marked so in the context block, with the date "
            "and the receipt; 0: never marked."
        ),
    )
    log_path: RelPath | None = Field(
        None,
        description="Session log, relative to the workspace; default <notes_dir>/Session log.md.",
        examples=["notes/Session log.md"],
    )
    transcript_dirs: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "More folders to ingest, per agent, each read like the agent's own home folder."
        ),
        examples=[{"claude-code": ["~/work-machine/.claude"]}],
    )
    model_backend: str = Field(
        "command", description="The model backend dreaming uses: command or openai."
    )
    model_command: list[str] = Field(
        default_factory=list,
        description=(
            "The model program and its arguments, run without a shell; {system_file} "
            "becomes a file holding the system prompt."
        ),
        examples=[
            ["claude", "-p", "--no-session-persistence", "--system-prompt-file", "{system_file}"]
        ],
    )
    model_timeout_seconds: float = Field(
        600.0, gt=0, description="Seconds a model call may take before the run fails."
    )
    openai: OpenAIModel = Field(
        default_factory=OpenAIModel,  # type: ignore[arg-type]
        description='An OpenAI-compatible endpoint, for model_backend = "openai".',
    )
    themes: list[str] = Field(
        default_factory=list,
        description="Themes over the packs here, in order (a later one wins on a file).",
        examples=[["core-strict"]],
    )
    registries: list[str] = Field(
        default_factory=list,
        description="More pack registries (a path or an https URL), after hippo's own.",
        examples=[["https://example.org/hippo/index.toml"]],
    )
    disabled_packs: list[str] = Field(
        default_factory=list,
        description=(
            "Packs and themes that do not run here though they are installed (a pack "
            "a pip-installed distribution ships runs in every workspace of its environment)."
        ),
        examples=[["security-notes"]],
    )
    index_url: Annotated[str, AfterValidator(_index_url)] = Field(
        "",
        description=(
            "A team index on PostgreSQL that ingest adds this workspace's sessions to; "
            "empty: the local index only. The password belongs in ~/.pgpass, not here."
        ),
        examples=["postgresql+psycopg://hippo@db.example.org/hippo"],
    )
    index_project: str = Field(
        "",
        description="The workspace's name in the team index; empty: the name of its folder.",
    )
    index_share: Literal["workspace", "machine"] = Field(
        "workspace",
        description=(
            "What ingest sends the team index: workspace (this workspace's sessions) or "
            "machine (every session this machine indexed; other projects' under none)."
        ),
    )


KNOWN_KEYS = tuple(SettingsModel.model_fields)


OPENAI_KEYS = tuple(OpenAIModel.model_fields)


def unknown_key_warning(key: str, shown_as: str, table: str = "") -> str:
    """The one line naming an unknown key (of ``table``, if given), with a suggestion when
    one is close."""
    known = OPENAI_KEYS if table == "openai" else KNOWN_KEYS
    prefix = f"{table}." if table else ""
    line = f"{shown_as}: '{prefix}{key}' is not a setting and was ignored"
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f"{line} - did you mean {prefix}{close[0]}?" if close else line


def parse_toml(raw: bytes, shown_as: str) -> tomlkit.TOMLDocument:
    """Parse settings bytes, turning every failure into one line naming the file."""
    try:
        return tomlkit.parse(raw.decode("utf-8").removeprefix("\ufeff"))  # a BOM is no key
    except UnicodeDecodeError as exc:
        raise HippoError(f"{shown_as}: not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    except ParseError as exc:
        raise HippoError(f"{shown_as}: not valid TOML: {exc}") from None


def validate_settings(raw: bytes, *, shown_as: str) -> LoadedSettings:
    """Validate the bytes of a settings file into :class:`Settings` and its warnings."""
    values = parse_toml(raw, shown_as).unwrap()
    refuse_nul(values, shown_as)
    # A table hippo does not know belongs to a plugin (hippo_register_settings), which
    # checks it when it reads it; ``hippo doctor`` names a table that no plugin owns.
    tables = {k: v for k, v in values.items() if k not in KNOWN_KEYS and isinstance(v, dict)}
    warnings = [
        unknown_key_warning(k, shown_as) for k in values if k not in KNOWN_KEYS and k not in tables
    ]
    known = {k: v for k, v in values.items() if k in KNOWN_KEYS}
    openai = known.get("openai")
    if isinstance(openai, dict):  # an unknown key here is ignored and named, as at the top
        warnings += [
            unknown_key_warning(k, shown_as, "openai") for k in openai if k not in OPENAI_KEYS
        ]
        known["openai"] = {k: v for k, v in openai.items() if k in OPENAI_KEYS}
    model = _validate(known, shown_as)
    settings = Settings.from_values({**model.model_dump(), "tables": tables})
    return LoadedSettings(settings, tuple(warnings))


def refuse_nul(value: Any, shown_as: str, where: str = "") -> None:
    """Raise :class:`HippoError` naming the first key or string in ``value`` (the table at
    ``where``) that holds a NUL character: TOML writes one as ``\\u0000``, and a path with
    one makes every ``open()`` raise."""
    found = _nul_at(value, where)
    if found is not None:
        shown = found.replace("\0", "\\u0000")
        raise HippoError(f"{shown_as}: {shown}: holds a NUL character (\\u0000); remove it")


def _nul_at(value: Any, where: str) -> str | None:
    if isinstance(value, str):
        return where if "\0" in value else None
    if isinstance(value, list):
        value = dict(enumerate(value))
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        inner = f"{where}.{key}" if where else str(key)
        found = inner if "\0" in str(key) else _nul_at(item, inner)
        if found is not None:
            return found
    return None


def _validate(values: dict[str, Any], shown_as: str) -> SettingsModel:
    try:
        return SettingsModel.model_validate(values)
    except ValidationError as exc:
        raise HippoError(error_line(exc, values, shown_as)) from None


def error_line(
    exc: ValidationError, values: dict[str, Any], shown_as: str, prefix: tuple[str, ...] = ()
) -> str:
    """The first problem of ``exc``: ``<file>: <key>: <what is wrong>, found <value>``."""
    error = exc.errors()[0]
    where = ".".join([*prefix, *(str(part) for part in error["loc"])])
    message = error["msg"].removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    line = f"{shown_as}: {where}: {message}, found {_shown_value(values, error['loc'])}"
    found = _value_at(values, error["loc"])
    shell_safe = isinstance(found, str) and "'" not in found
    if error["type"] == "list_type" and shell_safe and len(error["loc"]) == 1:
        import shlex

        # model_command is a program and its arguments, one string each.
        items = shlex.split(found) if where == "model_command" else [found]
        listed = tomlkit.item(items).as_string()
        line += f"; write a list: hippo config set {where} '{listed}'"
    return line


def _value_at(values: dict[str, Any], loc: tuple[int | str, ...]) -> Any:
    value: Any = values
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _shown_value(values: dict[str, Any], loc: tuple[int | str, ...]) -> str:
    value: Any = values
    for part in loc:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return "nothing"
    if isinstance(value, str) and "://" in value and "@" in value:
        from hippo_core.base.outbound import shown_url

        value = shown_url(value)  # a password in a URL is not echoed back
    text = tomlkit.item(value).as_string() if value is not None else "nothing"
    return text if len(text) <= 60 else text[:57] + "..."


def get_setting(settings: Settings, key: str) -> Any:
    """The effective value of ``key`` (defaults included)."""
    _check_known(key)
    if key == "log_path":
        return settings.effective_log_path
    value = getattr(settings, key)
    if isinstance(value, Record):
        return value.as_dict()
    return list(value) if isinstance(value, tuple) else value


def set_setting(
    path: Path,
    key: str,
    text: str,
    *,
    shown_as: str,
    check: Callable[[Settings], None] | None = None,
) -> None:
    """Set ``key`` to the TOML value ``text`` (a bare word is a string), keeping comments.

    The new file is validated before it is written, then given to ``check`` (which raises
    when the workspace could not use the value); nothing is written when either refuses.
    """
    _check_known(key)
    raw = path.read_bytes() if path.exists() else b""
    document = parse_toml(raw, shown_as)
    value = parse_value(text)
    if key == "index_url" and isinstance(value, str):
        from hippo_core.settings.url_passwords import PASSWORD_ADVICE, has_password

        if has_password(value):
            raise UsageError(
                f"index_url: not written: the URL holds a password, and {shown_as} is committed; "
                + PASSWORD_ADVICE
            )
    document[key] = value
    new = dumped(document, raw)
    loaded = validate_settings(new.encode("utf-8"), shown_as=shown_as)
    if check is not None:
        check(loaded.settings)
    atomic_write(path, new)


def dumped(document: tomlkit.TOMLDocument, raw: bytes) -> str:
    """``document`` as the settings file's new text: a last line break, and the byte-order
    mark the file had (``raw``, its old bytes)."""
    new = tomlkit.dumps(document)
    new = new if new.endswith("\n") else new + "\n"
    return "\ufeff" + new if raw.startswith(b"\xef\xbb\xbf") else new


def parse_value(text: str) -> Any:
    try:
        return tomlkit.parse(f"value = {text}")["value"]
    except ParseError:
        return text


def _check_known(key: str) -> None:
    if key not in KNOWN_KEYS:
        line = unknown_key_warning(key, "hippo config").replace(" and was ignored", "")
        raise UsageError(f"{line}; known settings: {', '.join(KNOWN_KEYS)}")


def _inline(value: dict[str, Any]) -> Any:
    table = tomlkit.inline_table()
    table.update(value)
    return table


def settings_template(chosen: dict[str, tuple[str, list[str]]] | None = None) -> str:
    """A new settings file: every key with its description, commented out at its default;
    a key of ``chosen`` is written set, to its value (a string), under the comment lines
    that say why."""
    lines = [
        "# hippo workspace settings. Every key is optional: the commented values are the",
        "# defaults. Change one with `hippo config set KEY VALUE` or edit this file.",
    ]
    for name, field in SettingsModel.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            lines += ["", f"# {field.description}", f"# [{name}]"]
            for key, sub in type(default).model_fields.items():
                value = getattr(default, key)
                # A table's default must read back as TOML once uncommented: {} inline.
                item = _inline(value).as_string() if isinstance(value, dict) else None
                item = item or tomlkit.item(value).as_string()
                lines.append(f"# {key} = {item}  # {sub.description}")
            continue
        if chosen and name in chosen:
            set_to, why = chosen[name]
            lines += ["", f"# {field.description}", *(f"# {line}" for line in why)]
            lines.append(f"{name} = {tomlkit.item(set_to).as_string()}")
            continue
        shown = (field.examples or [default])[0] if default in (None, {}, []) else default
        value = tomlkit.inline_table() if isinstance(shown, dict) else tomlkit.item(shown)
        if isinstance(shown, dict):
            value.update(shown)
        lines += ["", f"# {field.description}", f"# {name} = {value.as_string()}"]
    return "\n".join(lines) + "\n"
