"""Credentials written in the committed settings (findings P3 and T2): ``hippo doctor`` warns
about each, naming the key, the file and the safer place; ``hippo config set index_url``
refuses a URL with a password, and the file is left as it was."""

from __future__ import annotations

import pytest

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.sleep_scene import make_sleepy

SETTINGS = ".hippo/settings.toml"
INDEX_URL = (
    f"{SETTINGS}: warning: team index: index_url holds a password, and {SETTINGS} is "
    "committed: keep the password in ~/.pgpass or PGPASSWORD (or the whole URL in "
    "HIPPO_INDEX_URL) and write index_url without it"
)


def bearer(table: str, key: str = "bearer_token") -> str:
    return (
        f"{SETTINGS}: warning: sleep: [sleep.{table}] {key} is written in {SETTINGS}, which "
        f"is committed: name an environment variable in {key}_env or a keyring entry in "
        f"{key}_keyring instead, and remove {key}"
    )


def url_password(table: str, key: str, instead: str) -> str:
    return (
        f"{SETTINGS}: warning: sleep: [sleep.{table}] {key} holds a password, and {SETTINGS} "
        f"is committed: give the URL without it, and the credential through {instead}"
    )


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://hippo:pgpass-1234@127.0.0.1:9/hippo_team",
        "postgresql+psycopg://hippo@127.0.0.1:9/hippo_team?password=pgpass-1234",
    ],
)
def test_doctor_warns_about_a_password_in_index_url(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, url: str
) -> None:
    root = make_workspace(f'index_url = "{url}"\n')
    run = hippo("doctor", cwd=root)
    assert INDEX_URL in run.out.splitlines(), run.out
    assert "pgpass-1234" not in run.out + run.err


def test_no_warning_without_a_password(make_workspace: WorkspaceMaker, hippo: HippoRunner) -> None:
    root = make_workspace('index_url = "postgresql+psycopg://hippo@127.0.0.1:9/hippo_team"\n')
    assert "holds a password" not in hippo("doctor", cwd=root).out


def test_doctor_warns_about_each_bearer_and_url_password_of_the_sleep_pack(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(
        make_workspace(),
        hippo,
        "[sleep.serve]\n"
        'bearer_token = "serve-secret"\n'
        "[sleep.notify]\n"
        'bearer_token = "notify-secret"\n'
        'secret = "notify-sig-secret"\n'
        'webhook_url = "https://hook:hook-secret@hooks.example/in"\n'
        "[sleep.ripple]\n"
        'bearer_token = "ripple-secret"\n'
        'secret = "ripple-sig-secret"\n'
        "[sleep.model]\n"
        'url = "http://me:model-secret@127.0.0.1:9/v1"\n',
    )
    run = night.run("doctor")
    lines = run.out.splitlines()
    for expected in (
        bearer("serve"),
        bearer("notify"),
        bearer("ripple"),
        bearer("notify", "secret"),
        bearer("ripple", "secret"),
        url_password("notify", "webhook_url", "bearer_token_env or bearer_token_keyring"),
        url_password("model", "url", "api_key_env"),
    ):
        assert expected in lines, run.out
    for secret in ("serve-", "notify-", "notify-sig-", "hook-", "ripple-", "ripple-sig-", "model-"):
        assert f"{secret}secret" not in run.out + run.err  # named, never shown


def test_bearers_named_by_environment_or_keyring_are_not_warned_about(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    night = make_sleepy(
        make_workspace(),
        hippo,
        '[sleep.serve]\nbearer_token_env = "SERVE_BEARER"\n'
        '[sleep.notify]\nbearer_token_keyring = "hippo/notify"\n',
    )
    assert "is written in" not in night.run("doctor").out


def test_a_secret_key_the_settings_do_not_know_yet_is_still_warned_about(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    """Read from the table as written: a key the pack's settings refuse is warned about
    beside the error."""
    night = make_sleepy(make_workspace(), hippo, '[sleep.notify]\nsecret = "hmac-secret"\n')
    assert bearer("notify", "secret") in night.run("doctor").out.splitlines()


def test_config_set_refuses_a_password_in_index_url(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
) -> None:
    root = make_workspace("# the team's settings\n")
    before = (root / SETTINGS).read_bytes()
    for url in (
        "postgresql+psycopg://hippo:pgpass-1234@127.0.0.1:5432/hippo_team",
        "postgresql+psycopg://hippo@127.0.0.1:5432/hippo_team?password=pgpass-1234",
    ):
        run = hippo("config", "set", "index_url", url, cwd=root)
        assert run.code == 2 and run.out == ""
        assert run.err == (
            f"error: index_url: not written: the URL holds a password, and {SETTINGS} is "
            "committed; keep the password in ~/.pgpass or PGPASSWORD (or the whole URL in "
            "HIPPO_INDEX_URL) and write index_url without it\n"
        )
        assert (root / SETTINGS).read_bytes() == before
    fine = "postgresql+psycopg://hippo@127.0.0.1:5432/hippo_team"
    assert hippo("config", "set", "index_url", fine, cwd=root).code == 0
    assert f'index_url = "{fine}"' in (root / SETTINGS).read_text()
