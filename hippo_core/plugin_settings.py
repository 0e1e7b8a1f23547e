"""Settings tables that plugins own: ``[sleep]`` and its like (``hippo_register_settings``).

hippo keeps a table it does not know as written (``Settings.tables``). The plugin that owns
it reads it with :func:`table`, which validates it with the plugin's pydantic model. A key
the model does not have is ignored and named, with where it likely belongs when another
table has a key of that name or close to it::

    'sleep.max_tokens' is not a setting and was ignored - did you mean sleep.model.max_tokens?

A value of the wrong type is one error naming the key and what was found.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from hippo_core.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.plugins import Plugins
    from hippo_core.workspace import Workspace

SHOWN_AS = ".hippo/settings.toml"


def table(workspace: Workspace, plugins: Plugins, name: str) -> tuple[Any, list[str]]:
    """The table ``name`` validated by the model its plugin registered, and the warnings.

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
        return model.model_validate(cleaned), warnings
    except ValidationError as exc:
        from hippo_core.settings_schema import error_line

        raise HippoError(error_line(exc, cleaned, SHOWN_AS, (name,))) from None


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
