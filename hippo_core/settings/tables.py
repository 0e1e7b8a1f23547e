"""Settings tables that plugins own: ``[sleep]`` and its like (``hippo_register_settings``).

hippo keeps a table it does not know as written (``Settings.tables``). The plugin that owns
it reads it with :func:`table`, which validates it with the plugin's pydantic model. A key
the model does not have is ignored and named, with where it likely belongs when another
table has a key of that name or close to it::

    'sleep.max_tokens' is not a setting and was ignored - did you mean sleep.model.max_tokens?

A key at the top of the file that a plugin's table has is named with its table too
(:func:`placed`).

A value of the wrong type is one error naming the key and what was found.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace

SHOWN_AS = ".hippo/settings.toml"


def settings_table(workspace: Workspace, plugins: Plugins, name: str) -> tuple[Any, list[str]]:
    """Your ``[name]`` table of ``.hippo/settings.toml``, validated by the model you registered
    (``hippo_register_settings``), and the warning lines for keys it does not know.

    Raises :class:`HippoError` when no plugin owns the table or a value is wrong.
    """
    owned = plugins.settings_tables()
    if name not in owned:
        raise HippoError(f"no plugin here owns the settings table [{name}]")
    model: type[BaseModel] = owned[name]
    values = workspace.settings.tables.get(name, {})
    known = every_key(owned)
    warnings = [
        unknown_line(f"{name}.{key}", known) for key in unknown_keys(model, values, prefix=name)
    ]
    cleaned = _known_only(model, values)
    try:
        validated = model.model_validate(cleaned)
    except ValidationError as exc:
        from hippo_core.settings.schema import error_line

        raise HippoError(error_line(exc, cleaned, SHOWN_AS, (name,))) from None
    for dotted, given, read in moved(validated, cleaned, name):
        warnings.append(f"'{dotted}' = {given!r} is out of its range and is read as {read!r}")
    return validated, warnings


def moved(validated: BaseModel, given: dict[str, Any], prefix: str) -> list[tuple[str, Any, Any]]:
    """The values a table's model changed as it read them (a floor or a clamp: ``tick_seconds
    = 1`` read as 30): each as ``(dotted key, given, read)``."""
    found = []
    for key, value in given.items():
        read = getattr(validated, key, None)
        dotted = f"{prefix}.{key}"
        if isinstance(read, BaseModel) and isinstance(value, dict):
            found += moved(read, value, dotted)
        elif isinstance(value, int | float) and not isinstance(value, bool) and read != value:
            found.append((dotted, value, read))
    return found


def unknown_tables(workspace: Workspace, plugins: Plugins) -> list[str]:
    """A line for each table in the file that no plugin owns (``hippo doctor``)."""
    owned = plugins.settings_tables()
    lines = []
    for name in workspace.settings.tables:
        if name not in owned:
            close = difflib.get_close_matches(name, list(owned), n=1, cutoff=0.6)
            line = f"{SHOWN_AS}: '[{name}]' is not a table of hippo or of a plugin here"
            lines.append(f"{line} - did you mean [{close[0]}]?" if close else line)
    return lines


def placed(lines: Sequence[str], plugins: Plugins) -> list[str]:
    """The settings' warning ``lines``, each about a key at the top of the file that a
    plugin's table has (``max_attempts`` is ``sleep.max_attempts``) saying where it belongs:
    the settings are read without the plugins, so only now can that be told."""
    shown: list[str] = []
    keys: list[str] | None = None
    for line in lines:
        found = _IGNORED.search(line)
        if found is not None and " - did you mean " not in line:
            keys = every_key(plugins.settings_tables()) if keys is None else keys
            homes = [k for k in keys if k.rsplit(".", 1)[-1] == found.group(1)]
            if homes:
                line += f" - did you mean {homes[0]}?"
        shown.append(line)
    return shown


#: A settings warning about a key of no table hippo knows.
_IGNORED = re.compile(r"'([A-Za-z0-9_-]+)' is not a setting and was ignored$")


def every_key(owned: dict[str, type[BaseModel]]) -> list[str]:
    """Every dotted key of every owned table: ``sleep.model.max_tokens`` and so on."""
    keys: list[str] = []
    for name, model in owned.items():
        keys += _keys(model, name)
    return keys


def _keys(model: type[BaseModel], prefix: str) -> list[str]:
    keys = []
    for field_name, field in model.model_fields.items():
        dotted = f"{prefix}.{field_name}"
        keys.append(dotted)
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            keys += _keys(inner, dotted)
    return keys


def unknown_keys(model: type[BaseModel], values: dict[str, Any], *, prefix: str) -> list[str]:
    """The keys of ``values`` (dotted, below the table) that ``model`` does not have."""
    found = []
    for key, value in values.items():
        field = model.model_fields.get(key)
        if field is None:
            found.append(key)
            continue
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel) and isinstance(value, dict):
            found += [f"{key}.{sub}" for sub in unknown_keys(inner, value, prefix=key)]
    return found


def unknown_line(dotted: str, known: list[str]) -> str:
    """The one line naming an unknown key, and the key it likely meant."""
    line = f"'{dotted}' is not a setting and was ignored"
    leaf = dotted.rsplit(".", 1)[-1]
    same_leaf = [k for k in known if k.rsplit(".", 1)[-1] == leaf and k != dotted]
    close = same_leaf or difflib.get_close_matches(dotted, known, n=1, cutoff=0.75)
    return f"{line} - did you mean {close[0]}?" if close else line


def _known_only(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    cleaned = {}
    for key, value in values.items():
        field = model.model_fields.get(key)
        if field is None:
            continue
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel) and isinstance(value, dict):
            value = _known_only(inner, value)
        cleaned[key] = value
    return cleaned


def _leaf_keys(model: type[BaseModel], prefix: str) -> list[str]:
    """The dotted keys of ``model`` that hold a value (not a table of their own)."""
    keys = []
    for field_name, field in model.model_fields.items():
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            keys += _leaf_keys(inner, f"{prefix}.{field_name}")
        else:
            keys.append(f"{prefix}.{field_name}")
    return keys


def _owned_key(
    plugins: Plugins, key: str, *, tables: bool = False
) -> tuple[str, type[BaseModel], list[str]]:
    """The table of ``key`` (``triggers.on_compact``), its model and the path below it (a
    table of its own too, with ``tables``); one usage error when it is none of them."""
    from hippo_core.base.errors import UsageError

    owned = plugins.settings_tables()
    name, _, rest = key.partition(".")
    if name not in owned or not rest:
        raise UsageError(f"'{key}' is not a setting of hippo or of a plugin here")
    model = owned[name]
    leaves = _leaf_keys(model, name)
    known = _keys(model, name) if tables else leaves
    if key not in known:
        inside = [leaf for leaf in leaves if leaf.startswith(key + ".")]
        if inside:
            raise UsageError(f"'{key}' is a table: set one of its keys ({', '.join(inside[:6])})")
        line = unknown_line(key, known).replace(" and was ignored", "")
        if " - did you mean " not in line:
            more = f" and {len(known) - 12} more" if len(known) > 12 else ""
            line += f"; the keys of [{name}]: {', '.join(known[:12])}{more}"
        raise UsageError(line)
    return name, model, rest.split(".")


def get_plugin_setting(workspace: Workspace, plugins: Plugins, key: str) -> Any:
    """The effective value of a plugin table's dotted ``key`` (its default when unset), or
    of a whole table (``sleep``)."""
    if key in plugins.settings_tables():
        whole: BaseModel = settings_table(workspace, plugins, key)[0]
        return whole.model_dump()
    name, _model, path = _owned_key(plugins, key, tables=True)
    value: Any = settings_table(workspace, plugins, name)[0]
    for part in path:
        value = getattr(value, part)
    return value.model_dump() if isinstance(value, BaseModel) else value


def set_plugin_setting(
    workspace: Workspace, plugins: Plugins, key: str, text: str, *, shown_as: str
) -> None:
    """Set a plugin table's dotted ``key`` to the TOML value ``text`` in the settings file,
    keeping its comments; checked by the plugin's model first, nothing written when wrong."""
    from hippo_core.settings.schema import parse_value

    update_settings(workspace, plugins, {key: parse_value(text)}, shown_as=shown_as)


def update_settings(
    workspace: Workspace, plugins: Plugins, values: dict[str, Any], *, shown_as: str = SHOWN_AS
) -> None:
    """Set plugin tables' dotted keys (``{"sleep.ripple.type": "script"}``) in
    ``.hippo/settings.toml`` in one write, keeping its comments and every other key; each
    table is checked by its plugin's model first, and nothing is written when a value is
    wrong (one :class:`HippoError` naming it)."""
    import tomlkit

    from hippo_core.files.atomic import atomic_write
    from hippo_core.settings.schema import dumped, error_line, parse_toml, refuse_nul

    settings_path = workspace.settings_path
    raw = settings_path.read_bytes() if settings_path.exists() else b""
    document = parse_toml(raw, shown_as)
    touched: dict[str, type[BaseModel]] = {}
    for key, value in values.items():
        name, model, path = _owned_key(plugins, key)
        touched[name] = model
        where: Any = document
        for part in [name, *path[:-1]]:
            if part not in where:
                where[part] = tomlkit.table()
            where = where[part]
            if not isinstance(where, dict):
                raise HippoError(f"{shown_as}: '{key}': {part} is not a table; fix it by hand")
        where[path[-1]] = value
    for name, model in touched.items():
        table = document.unwrap().get(name, {})
        refuse_nul(table, shown_as, name)  # what loading the file would refuse, unwritten
        cleaned = _known_only(model, table)
        try:
            validated = model.model_validate(cleaned)
        except ValidationError as exc:
            raise HippoError(error_line(exc, table, shown_as, (name,))) from None
        for dotted, given, read in moved(validated, cleaned, name):
            if dotted in values:
                raise HippoError(
                    f"{shown_as}: '{dotted}' = {given!r} is out of its range: it would be read "
                    f"as {read!r}. {_range_of(model, dotted.split('.')[1:])}"
                )
    atomic_write(settings_path, dumped(document, raw))


def _range_of(model: type[BaseModel], path: list[str]) -> str:
    """What the key's field says of its range (its description), or how to find out."""
    for part in path[:-1]:
        inner = model.model_fields[part].annotation
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return ""
        model = inner
    field = model.model_fields.get(path[-1])
    description = (field.description or "").strip() if field is not None else ""
    return description or "Give a value inside its range (the plugin's chapter lists it)."
