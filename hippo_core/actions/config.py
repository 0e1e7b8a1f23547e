"""Whether the workspace can use a setting's new value: what ``hippo config set`` checks
beyond the file's schema, so that it refuses every value a later command would refuse.

The schema (:mod:`hippo_core.settings.schema`) knows a value's type and range; these checks
need the workspace and its plugins: the backends registered, the themes installed, the
registries' locations.
"""

from __future__ import annotations

import difflib
import os
from typing import TYPE_CHECKING

from hippo_core.base.errors import UsageError

if TYPE_CHECKING:
    from hippo_core.plugins.manager import Plugins
    from hippo_core.settings.values import Settings


def check_value(root: str, plugins: Plugins, key: str, settings: Settings, shown_as: str) -> None:
    """Raise :class:`UsageError` when ``settings`` (the file as it would be written, for the
    workspace at ``root``) gives ``key`` a value the commands that read it refuse."""
    problem = {
        "model_backend": _backend,
        "registries": _registries,
        "themes": _themes,
    }.get(key, _nothing)(root, plugins, settings)
    if problem:
        raise UsageError(f"{shown_as}: {key}: {problem}")


def _nothing(root: str, plugins: Plugins, settings: Settings) -> str:
    return ""


def _backend(root: str, plugins: Plugins, settings: Settings) -> str:
    name, known = settings.model_backend, sorted(plugins.backends())
    if name in known:
        return ""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" - did you mean '{close[0]}'?" if close else ""
    return f"'{name}' is not a backend here; use one of: {', '.join(known)}{hint}"


def _registries(root: str, plugins: Plugins, settings: Settings) -> str:
    from hippo_core.packs.archive import is_url, url_problem
    from hippo_core.packs.registries import FIRST_PARTY

    for text in settings.registries:
        if text == FIRST_PARTY:
            continue
        if is_url(text):
            problem = url_problem(text)
            if problem:
                return f"{text}: {problem}"
            continue
        if not text.strip():
            return "an empty location; give a path or an https URL"
        path = os.path.join(root, os.path.expanduser(text))
        if not os.path.isfile(path):
            return f"{text}: no index file there ({os.path.normpath(path)})"
    return ""


def _themes(root: str, plugins: Plugins, settings: Settings) -> str:
    from hippo_core.packs.files import PackError
    from hippo_core.packs.survey import survey
    from hippo_core.settings.values import LoadedSettings
    from hippo_core.workspace.folder import Workspace

    try:
        found = survey(Workspace(root, LoadedSettings(settings)), plugins, strict=False)
    except PackError:
        return ""  # a pack here is broken: every command says so, whatever themes are on
    if not found.problems:
        return ""
    # Said at the time of setting it: install it first, rather than take it out again.
    problem = found.problems[0].problem.removeprefix("themes: ")
    problem = problem.split(" or take it out of themes")[0]
    return problem.replace("install it (", "install it first (")
