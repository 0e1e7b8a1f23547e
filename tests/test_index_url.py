"""A malformed ``index_url`` (a port that is not a number, no host, an unclosed IPv6
address) is one line naming it: refused by ``hippo config set``, and at use, whether the
settings file was edited by hand or ``HIPPO_INDEX_URL`` names it. Never SQLAlchemy's
traceback."""

from __future__ import annotations

import pytest

from hippo_core.base.errors import HippoError
from tests.conftest import HippoRunner, WorkspaceMaker

SETTINGS = ".hippo/settings.toml"
BAD = {
    "postgresql://hippo@db.example:notaport/team": "the port 'notaport' is not a number from 1",
    "postgresql+psycopg://hippo@db.example:99999/team": "the port '99999' is not a number",
    "postgresql://hippo@db.example:0/team": "the port 0 is not a number",
    "postgresql://hippo@[::1]:x/team": "the port 'x' is not a number",
    "postgresql:///team": "names no host",
    "postgresql://hippo@[::1:5432/team": "is not a URL (Invalid IPv6 URL)",
}


@pytest.mark.parametrize("url", list(BAD))
def test_config_set_refuses_a_malformed_index_url_in_one_line(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, url: str
) -> None:
    root = make_workspace()
    before = (root / SETTINGS).read_bytes()
    run = hippo("config", "set", "index_url", url, cwd=root)
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(f"error: {SETTINGS}: index_url: {BAD[url]}"), run.err
    assert run.err.count("\n") == 1 and "Traceback" not in run.err
    assert (root / SETTINGS).read_bytes() == before


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://hippo@db.example:5432/team",
        "postgresql://hippo@[::1]:5432/team",
        "postgresql:///team?host=/run/postgresql",
        "",
    ],
)
def test_config_set_takes_a_well_formed_one(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, url: str
) -> None:
    root = make_workspace()
    assert hippo("config", "set", "index_url", url, cwd=root).code == 0
    assert f'index_url = "{url}"' in (root / SETTINGS).read_text()


@pytest.mark.parametrize("command", [["ingest"], ["search", "x"], ["doctor"], ["context"]])
def test_one_written_by_hand_is_one_line_at_use(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, command: list[str]
) -> None:
    root = make_workspace('index_url = "postgresql://hippo@db.example:notaport/team"\n')
    run = hippo(*command, cwd=root)
    assert run.code == 1
    assert run.err == (
        f"error: {SETTINGS}: index_url: the port 'notaport' is not a number from 1 to 65535, "
        'found "postgresql://db.example:notaport/team"\n'
    )


def test_one_in_hippo_index_url_is_one_line_at_use(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIPPO_INDEX_URL", "postgresql://hippo@db.example:5432x/team")
    run = hippo("search", "x", cwd=make_workspace())
    assert run.code == 1
    assert run.err == (
        "error: HIPPO_INDEX_URL=postgresql://hippo@db.example:5432x/team: the port '5432x' "
        "is not a number from 1 to 65535; put it right, or unset it\n"
    )


def test_the_engine_refuses_one_that_got_past_in_one_line() -> None:
    pytest.importorskip("psycopg")
    from hippo_core.index.team import engine

    with pytest.raises(HippoError, match=r"^index_url .* is not a database URL \(") as caught:
        engine("postgresql://hippo@db.example:notaport/team")
    assert "\n" not in str(caught.value)
