"""``$HIPPO_HOME`` and its default, which on Linux is worked out without platformdirs."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from hippo_core.files.home import hippo_home, home_folder, index_path


def test_hippo_home_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "h"))
    assert hippo_home() == tmp_path / "h"
    assert index_path() == tmp_path / "h" / "index.sqlite"


def test_a_tilde_in_hippo_home_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HIPPO_HOME", "~/memory")
    assert home_folder() == str(tmp_path / "memory")


@pytest.mark.skipif(sys.platform != "linux", reason="elsewhere platformdirs itself answers")
@pytest.mark.parametrize("xdg", [None, "", "relative/data", "/srv/data", "/srv/data/"])
def test_the_default_is_what_platformdirs_says(
    xdg: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HIPPO_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    expected = platformdirs.user_data_dir("hippo", appauthor=False)
    assert Path(home_folder()) == Path(expected)
    assert home_folder().startswith(str(tmp_path) if not xdg or xdg[0] != "/" else "/srv")
