"""Redaction before indexing: private spans, secret shapes, labelled values, private sessions.

Secrets below are built by concatenation so that secret scanners do not flag this file;
each has the real shape of its kind.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hippo_core.transcripts.privacy import (
    PRIVATE_SESSION_MARKER,
    Redacted,
    is_private_session,
    redact,
)
from tests.claude_factory import ClaudeSession

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6"
OPENAI = "sk-proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AbCd_EfGh"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
KEY_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aFDrBz9vFqU4yFQW7eY+rX0fH3hJ0cB9L0oQ2wV5uTt7Yp8sM1nKjR6Gz4xCvD==\n"
    "-----END RSA PRIVATE KEY-----"
)


def test_redacted_is_the_text_and_the_count():
    assert redact(f"key {AWS_ID}") == Redacted("key [redacted:aws-access-key]", 1)
    assert redact("nothing here") == Redacted("nothing here", 0)


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        (AWS_ID, "aws-access-key"),
        ("ASIA" + "Y34FZKBOKMUTVV7A", "aws-access-key"),
        (GITHUB, "github-token"),
        ("gho_" + "16C7e42F292c6912E7710c838347Ae178B4a", "github-token"),
        ("ghu_" + "16C7e42F292c6912E7710c838347Ae178B4a", "github-token"),
        ("ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a", "github-token"),
        (
            "ghr_" + "1B4a2e77838347a7E420ce178F2E7c6912E169246c34E1ccbF66C46812d16D5B",
            "github-token",
        ),
        ("github_pat_" + "11ABCDEFG0abcdefghijkl_" + "m" * 59, "github-token"),
        (OPENAI, "api-key"),
        (ANTHROPIC, "api-key"),
        ("sk-" + "T3BlbkFJ" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6", "api-key"),
        (SLACK, "slack-token"),
        ("xoxp-" + "2222222222-3333333333-444444444444", "slack-token"),
        (GOOGLE, "google-api-key"),
        (STRIPE, "stripe-key"),
        ("rk_live_" + "51H8aBcDeFgHiJkLmNoPqRsT", "stripe-key"),
        (JWT, "jwt"),
    ],
)
def test_each_secret_shape_is_replaced_and_the_text_around_it_kept(secret, kind):
    text = f"Run it with {secret} (then rotate it).\nNext line."
    assert redact(text) == Redacted(
        f"Run it with [redacted:{kind}] (then rotate it).\nNext line.", 1
    )


@pytest.mark.parametrize(
    "text",
    [
        "AKIA" + "IOSFODNN7EXAMPL is one character short",
        "XAKIA" + "IOSFODNN7EXAMPLE is inside a longer word",
        "akia" + "iosfodnn7example is lower case",
        "ghp_" + "short and ghp_token_cache are no tokens",
        "risk-assessment-framework-2024-for-the-team is a slug",
        "sk-learn-compatible-estimators-and-friends has no digit",
        "task-" + "1234567890abcdefghijklmn ends in sk- inside a word",
        "xoxo-hugs-and-kisses-from-the-team",
        "AIza" + "SyD-9tSrke72Pou is too short",
        "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc is a test key",
        "eyJhbGciOiJIUzI1NiJ9 alone is only a header",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----",
        AWS_SECRET + " without a label",
    ],
)
def test_near_misses_are_left_alone(text):
    assert redact(text) == Redacted(text, 0)


def test_a_private_key_block_is_replaced_from_begin_through_end():
    text = f"Here is the deploy key:\n{KEY_BLOCK}\nPut it in ~/.ssh/id_rsa."
    expected = "Here is the deploy key:\n[redacted:private-key]\nPut it in ~/.ssh/id_rsa."
    assert redact(text) == Redacted(expected, 1)


@pytest.mark.parametrize("label", ["OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY"])
def test_every_kind_of_private_key_block_is_replaced(label):
    text = f"-----BEGIN {label}-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END {label}-----\nok"
    assert redact(text) == Redacted("[redacted:private-key]\nok", 1)


def test_a_pgp_private_key_block_is_replaced():
    text = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----"
    assert redact(text) == Redacted("[redacted:private-key]", 1)


def test_an_unterminated_private_key_block_hides_the_rest_of_the_text():
    text = "cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nmore\n"
    assert redact(text) == Redacted("cat id_rsa\n[redacted:private-key]", 1)


def test_a_key_block_escaped_inside_json_is_replaced():
    text = (
        '{"type": "service_account", '
        '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQ\\n-----END PRIVATE KEY-----\\n"}'
    )
    expected = '{"type": "service_account", "private_key": "[redacted:private-key]\\n"}'
    assert redact(text) == Redacted(expected, 1)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://ledger:s3cr%40t-Pw@db.internal:5432/ledger",
            "postgres://ledger:[redacted:password]@db.internal:5432/ledger",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:[redacted:password]@cache:6379/0"),
        (
            "https://bot:p@ss@git.example.com/x.git",
            "https://bot:[redacted:password]@git.example.com/x.git",
        ),
        (
            "mysql+pymysql://root:Tr0ub4dor&3@localhost/app",
            "mysql+pymysql://root:[redacted:password]@localhost/app",
        ),
    ],
)
def test_a_password_in_a_url_is_replaced_and_scheme_user_and_host_kept(url, expected):
    assert redact(f"DATABASE_URL={url} ./manage.py migrate") == Redacted(
        f"DATABASE_URL={expected} ./manage.py migrate", 1
    )


@pytest.mark.parametrize(
    "text",
    [
        "git clone https://git@github.com/acme/ledger.git",
        "curl http://localhost:8080/users/@me",
        "postgres://app:${DB_PASSWORD}@db/ledger",
        "postgres://user:password@localhost/db (the docs' example)",
        "postgres://user:<password>@localhost/db",
        "see https://docs.python.org/3/library/re.html#re.sub",
    ],
)
def test_urls_without_a_real_password_are_left_alone(text):
    assert redact(text) == Redacted(text, 0)


def test_shell_assignments_keep_the_name_and_lose_the_value():
    text = (
        "export DB_PASSWORD=hunter2\n"
        "GITHUB_TOKEN=" + GITHUB + " gh api /user\n"
        "docker run -e POSTGRES_PASSWORD='s3cret pw!' -e MAX_TOKENS=4096 postgres:16\n"
        'SLACK_SIGNING_SECRET="8f742231b10e8888abcd99yyyzzz85a5" ./serve\n'
    )
    expected = (
        "export DB_PASSWORD=[redacted:secret]\n"
        "GITHUB_TOKEN=[redacted:github-token] gh api /user\n"
        "docker run -e POSTGRES_PASSWORD='[redacted:secret]' -e MAX_TOKENS=4096 postgres:16\n"
        'SLACK_SIGNING_SECRET="[redacted:secret]" ./serve\n'
    )
    assert redact(text) == Redacted(expected, 4)


def test_an_env_file():
    text = (
        "# .env for local development\n"
        "DEBUG=true\n"
        "DATABASE_HOST=localhost\n"
        "STRIPE_SECRET_KEY=whsec_5f8a7c2e9b1d\n"
        "Api_Key=9c1f0e7d6b5a4c3e\n"
        "DB_PWD=Tr0ub4dor&3\n"
        "GOOGLE_APPLICATION_CREDENTIALS=/run/secrets/gcp.json\n"
        "SESSION_TOKEN_TTL=3600\n"
        "PWD=/home/dev/ledger\n"
        "OLDPWD=/home/dev\n"
    )
    expected = text.replace("whsec_5f8a7c2e9b1d", "[redacted:secret]")
    expected = expected.replace("9c1f0e7d6b5a4c3e", "[redacted:secret]")
    expected = expected.replace("Tr0ub4dor&3", "[redacted:secret]")
    assert redact(text) == Redacted(expected, 3)


def test_a_yaml_file():
    text = (
        "database:\n"
        "  user: ledger\n"
        "  password: hunter2  # rotated quarterly\n"
        '  api_key: "AbC123xYz789"\n'
        "  access_key: 'q8w7e6r5t4'\n"
        "  secret:\n"
        "  - credential: s3cr3t-value\n"
        "  max_tokens: 4096\n"
        "  token_type: bearer\n"
    )
    expected = (
        "database:\n"
        "  user: ledger\n"
        "  password: [redacted:secret]  # rotated quarterly\n"
        '  api_key: "[redacted:secret]"\n'
        "  access_key: '[redacted:secret]'\n"
        "  secret:\n"
        "  - credential: [redacted:secret]\n"
        "  max_tokens: 4096\n"
        "  token_type: bearer\n"
    )
    assert redact(text) == Redacted(expected, 4)


def test_json_pretty_and_minified():
    pretty = (
        '{\n  "username": "ops",\n  "password": "hunter2",\n  "client_secret": "9f8e7d6c5b4a",\n'
        '  "max_tokens": 4096,\n  "refresh_token": null\n}'
    )
    assert redact(pretty) == Redacted(
        pretty.replace('"hunter2"', '"[redacted:secret]"').replace(
            '"9f8e7d6c5b4a"', '"[redacted:secret]"'
        ),
        2,
    )
    minified = '{"apiKey":"c0ffee-1234-beef","user":"ops","sessionToken":"FwoGZXIvYXdzEBY"}'
    assert redact(minified) == Redacted(
        '{"apiKey":"[redacted:secret]","user":"ops","sessionToken":"[redacted:secret]"}', 2
    )


def test_labelled_aws_secret_keys():
    credentials = f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n"
    assert redact(credentials) == Redacted(
        "[default]\naws_access_key_id = [redacted:aws-access-key]\n"
        "aws_secret_access_key = [redacted:aws-secret-key]\n",
        2,
    )
    sts = f'{{"Credentials": {{"AccessKeyId": "{AWS_ID}", "SecretAccessKey": "{AWS_SECRET}"}}}}'
    assert redact(sts).text == (
        '{"Credentials": {"AccessKeyId": "[redacted:aws-access-key]", '
        '"SecretAccessKey": "[redacted:aws-secret-key]"}}'
    )


#: One of each token family public secret scanners agree on (issue 14), built in pieces so
#: that this file holds none whole.
FAMILIES = {
    "gitlab-token": "glpat-" + "x1Y2z3A4b5C6d7E8f9G0",
    "npm-token": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + "CJDg2NjYyMmI3LWQ4MmEtNDRkOC1hMjZhLTE2ZmE4NWJl",
    "huggingface-token": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
    "sendgrid-key": "SG." + "aBcDeFgHiJkLmNoPqRsTuV" + "." + "w" * 18 + "X1y2Z3a4b5C6d7E8f9G0h1I2j",
    "twilio-key": "SK" + "0123456789abcdef" * 2,
    "mailgun-key": "key-" + "0123456789abcdef" * 2,
    "shopify-token": "shpat_" + "a1b2c3d4e5f6a7b8" * 2,
    "digitalocean-token": "dop_v1_" + "a1b2c3d4e5f6a7b8" * 4,
    "discord-token": "MTA5"
    + "NzQ1MjIzNDU2Nzg5MDEy"
    + "MzQ1.GhIjKl."
    + "mNoPqRsTuVwXyZ0123456789abc",
    "telegram-bot-token": "123456789:AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    "google-oauth-secret": "GOCSPX-" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01",
    "stripe-key": "whsec_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ",
    "slack-token": "xapp-1-" + "A0123456789-1234567890123-abcdef",
}


@pytest.mark.parametrize("kind", sorted(FAMILIES))
def test_every_token_family_is_redacted_on_its_own(kind):
    token = FAMILIES[kind]
    assert redact(f"use {token} here") == Redacted(f"use [redacted:{kind}] here", 1)


def test_secrets_in_urls_and_connection_strings():
    azure = (
        "DefaultEndpointsProtocol=https;AccountName=ledger;AccountKey="
        + "aBcD" * 22
        + "==;EndpointSuffix=core.windows.net"
    )
    assert redact(azure).text == (
        "DefaultEndpointsProtocol=https;AccountName=ledger;AccountKey=[redacted:azure-key];"
        "EndpointSuffix=core.windows.net"
    )
    slack = "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/" + "aBcD" * 6
    assert redact(slack).text == "https://hooks.slack.com/[redacted:slack-webhook]"
    discord = "https://discord.com/api/webhooks/123456789012345678/" + "aB1-" * 17
    assert redact(discord).text == "https://discord.com/api/webhooks/[redacted:discord-webhook]"


def test_labelled_values_the_harness_found_kept():
    aws = "/" + AWS_SECRET[1:]  # one real key in 64 starts with a slash, like a path
    assert redact(f"aws_secret_access_key = {aws}").text == (
        "aws_secret_access_key = [redacted:aws-secret-key]"
    )
    assert redact("password=SuperSecret123").text == "password=[redacted:secret]"
    assert redact("secret: topsecretvalue").text == "secret: [redacted:secret]"
    assert redact("  password: hunter").text == "  password: [redacted:secret]"
    assert redact("token=nextToken").text == "token=nextToken"  # a name in camelCase


def test_code_headers_and_other_assignment_shapes():
    text = (
        'API_KEY = "9f8e7d6c5b4a3210"\n'
        'curl -H "X-Api-Key: 8f3a9c12aa77" https://api.example.com/v1\n'
        "$config['db_password'] => 'Pa55w0rd!';\n"
        'os.environ["GITHUB_TOKEN"] = "gh-fake-123456"\n'
        "psql 'host=db user=app password=Xk29#mq sslmode=require'\n"
        'const dbPwd = "Xk29#mq1";\n'
        "I typed my password: hunter2 and it failed\n"
    )
    expected = (
        'API_KEY = "[redacted:secret]"\n'
        'curl -H "X-Api-Key: [redacted:secret]" https://api.example.com/v1\n'
        "$config['db_password'] => '[redacted:secret]';\n"
        'os.environ["GITHUB_TOKEN"] = "[redacted:secret]"\n'
        "psql 'host=db user=app password=[redacted:secret] sslmode=require'\n"
        'const dbPwd = "[redacted:secret]";\n'
        "I typed my password: [redacted:secret] and it failed\n"
    )
    assert redact(text) == Redacted(expected, 7)


def test_a_run_of_name_characters_too_long_for_a_name_is_data():
    blob = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 8 + "_TOKEN=x9y8z7w6"
    assert redact(blob) == Redacted(blob, 0)
    assert redact(f"{blob} API_TOKEN=x9y8z7w6").count == 1


def test_names_are_found_after_characters_that_change_length_when_lowered():
    # "İ".lower() is two characters: a lowered copy of the text would not line up with it.
    prefix = "İSTANBUL İZMİR " * 4
    assert redact(f"{prefix}DB_PASSWORD=hunter2") == Redacted(
        f"{prefix}DB_PASSWORD=[redacted:secret]", 1
    )


@pytest.mark.parametrize(
    "text",
    [
        "password = input()",
        'password = getpass.getpass("Password: ")',
        'token = os.environ["GITHUB_TOKEN"]',
        'let token = env::var("API_TOKEN")?;',
        "TOKEN_LIMIT=4096",
        "PASSWORD_MIN_LENGTH=12",
        '"max_tokens": 4096, "input_tokens": 1200',
        "TOKEN=<your token>",
        "API_KEY=***",
        "export OPENAI_API_KEY=YOUR_API_KEY",
        "PASSWORD=your_db_pw",
        "API_KEY=xxxxxxxxxxxx",
        "PASSWORD=changeme",
        "SECRET=$SECRET",
        "GH_TOKEN=${{ secrets.GITHUB_TOKEN }}",
        "token: str",
        "    api_key: SecretStr | None = None",
        "def login(password: str, token: Optional[str] = None): ...",
        "self.token = token",
        "client = OpenAI(api_key=api_key)",
        "client = Client(api_key=key, timeout=3)",
        "conn = connect(host, password=pw_input)",
        'spwd_entry = "root:x:19000"',
        '"Resource": "arn:aws:secretsmanager:*:*:secret:rds-custom!*"',
        'return f"{self.upload_sequence_token:056d}"',
        '"AWS::ApiGateway::ApiKey": "48205d4ffd7feba3"',
        "  password: Hunter  # a capitalised word after a colon is taken as a type",
        "  token_type: bearer  # a word about a token, not one",
        'token.type = "text"',
        'tokenizer = AutoTokenizer.from_pretrained("gpt2")',
        "lasttoken = token",
        "cache_token = current_token",
        "tokens = text.split()",
        '"tokenizer": "cl100k_base"',
        "TOKENIZER=o200k_base",
        'tokens_path = "data/tokens.bin"',
        '"input_token": "next_token"',
        "ENV_VAR_AUTH_TOKEN = 'AWS_CONTAINER_AUTHORIZATION_TOKEN'",
        "    user_pool_id, limit=limit, next_token=token\n)",
        "CREDENTIALS_SSO = 's'",
        "password_hash = hashlib.sha256(password).hexdigest()",
        'if password == "":',
        "SECRETS_FILE=./secrets.json",
        "TOKEN_URL=https://oauth2.googleapis.com/token",
        "api_key: ''",
        "secret: |",
        "PWD=/home/dev/ledger",
    ],
)
def test_code_and_configuration_that_hold_no_secret_are_left_alone(text):
    assert redact(text) == Redacted(text, 0)


PROSE = """\
The token limit is 4096 per request, so we split the prompt. Keep the API key in the
vault, never in a chat; if a password leaks, rotate it and tell the security team.
Secrets are read from the environment at start-up. Credentials expire after 90 days.
The access key is tied to a role, and the private key never leaves the HSM.
Token: see the runbook. Password: the one in the vault, not the old one.
See https://example.com/docs/tokens and ask in #ops.
"""

CODE = '''\
def refresh(session: Session, token: str | None = None) -> str:
    """Return a fresh access token, reusing ``token`` while it is valid."""
    if token and not expired(token):
        return token
    response = session.post(TOKEN_URL, data={"grant_type": "refresh_token"})
    response.raise_for_status()
    secret = settings.CLIENT_SECRET
    password = getpass.getpass(prompt="Password: ")
    tokens = [t for t in response.json()["tokens"] if t]
    api_key = os.environ.get("API_KEY", "")
    return tokens[0]
'''


@pytest.mark.parametrize("text", [PROSE, CODE])
def test_ordinary_prose_and_code_come_back_byte_for_byte(text):
    result = redact(text)
    assert result.text == text
    assert result.count == 0


def test_private_spans():
    text = "Deploy. <private>The root password is on the sticky note.</private> Then check logs."
    assert redact(text) == Redacted("Deploy. [private] Then check logs.", 1)


def test_private_spans_over_lines_and_several_in_one_text():
    text = "a <private>one\ntwo\n</private> b <private>three</private> c"
    assert redact(text) == Redacted("a [private] b [private] c", 2)


def test_private_spans_nest():
    text = "a <private>x <private>y</private> z</private> b"
    assert redact(text) == Redacted("a [private] b", 1)


def test_an_unclosed_private_span_hides_the_rest_of_the_text():
    assert redact("keep <private>hide\nall of\nthis") == Redacted("keep [private]", 1)
    assert redact("a <private>x <private>y</private> z") == Redacted("a [private]", 1)


def test_a_stray_closing_tag_and_the_session_marker_are_not_spans():
    text = f"a </private> b\n{PRIVATE_SESSION_MARKER}\nc"
    assert redact(text) == Redacted(text, 0)


def test_a_secret_inside_a_private_span_is_counted_once():
    assert redact(f"<private>{GITHUB}</private> {OPENAI}") == Redacted(
        "[private] [redacted:api-key]", 2
    )


def test_redacting_twice_changes_nothing_more():
    text = "\n".join(
        [
            PROSE,
            CODE,
            "export DB_PASSWORD=hunter2",
            f"aws_secret_access_key = {AWS_SECRET}",
            f"GITHUB_TOKEN={GITHUB}",
            "postgres://app:s3cr3t@db/ledger",
            '{"password": "hunter2", "apiKey": "c0ffee-1234"}',
            KEY_BLOCK,
            f"a <private>{SLACK}</private> b",
            f"{JWT} {GOOGLE} {STRIPE} {ANTHROPIC}",
        ]
    )
    once = redact(text)
    assert once.count == 12
    assert redact(once.text) == Redacted(once.text, 0)


@pytest.mark.parametrize(
    "prompt",
    [
        PRIVATE_SESSION_MARKER,
        f"Fix the login bug.\n{PRIVATE_SESSION_MARKER}\n",
        f"  {PRIVATE_SESSION_MARKER}\t\r\nthe rest",
        f"first line\r\n{PRIVATE_SESSION_MARKER}",
    ],
)
def test_a_line_that_is_only_the_marker_makes_the_session_private(prompt):
    assert is_private_session(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "Fix the login bug.",
        f"Please add {PRIVATE_SESSION_MARKER} support to the parser.",
        f"{PRIVATE_SESSION_MARKER} this session",
        "<private>secret</private>",
        "<PRIVATE-SESSION>",
        "<private-session/>",
        "",
    ],
)
def test_the_marker_inside_a_line_or_spelt_otherwise_does_not(prompt):
    assert not is_private_session(prompt)


# Every trigger substring redaction looks for, lower case; text without any is a no-op.
TRIGGERS = (
    "<private>", "-----begin", "eyj", "akia", "asia", "aiza", "gh", "sk-", "k_live_",
    "xox", "://", "token", "secret", "passw", "pwd", "key", "credential",
    "mysql", "mariadb", "sshpass", "redis-cli", "curl", "login",
)  # fmt: skip


@given(st.text())
def test_redact_never_raises_and_never_changes_text_without_candidates(text):
    result = redact(text)
    assert result.count >= 0
    if not any(trigger in text.lower() for trigger in TRIGGERS):
        assert result == Redacted(text, 0)


FRAGMENTS = st.sampled_from(
    [
        "TOKEN", "token", "=", ": ", '"', "'", " ", "\n", "-", "_", "password", "api_key",
        "<private>", "</private>", "://", "u:", "@h", "sk-", "AKIA", "ghp_", "eyJ", ".",
        "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "abc123",
        "Xy7", "$", "(", ")", ",", "[redacted:secret]", "PWD", "secret", "4096",
        "mysql ", " -p", "sshpass", "curl -u ", "docker login", "https://", "@github.com/",
        "[redacted:github-token]", GITHUB,
    ]
)  # fmt: skip


@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=3)), max_size=30).map("".join))
@example("TOKEN=sk-0: -----END RSA PRIVATE KEY-----")  # the kind in `[redacted:secret]: ...`
@example("https://" + GITHUB + "@github.com/")  # a token as a URL's user
@example("curl -u TOKEN[redacted:github-token]")  # the marker's colon, no user:password
def test_redaction_of_trigger_rich_text_is_idempotent(text):
    once = redact(text)
    assert redact(once.text) == Redacted(once.text, 0)
    if "[redacted:[" not in text:
        assert "[redacted:[" not in once.text  # a marker never holds another


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'curl -H "Authorization: Bearer abcdefghijklmnop0123456789" https://api.example.com',
            'curl -H "Authorization: Bearer [redacted:authorization]" https://api.example.com',
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ=",
            "Authorization: Basic [redacted:authorization]",
        ),
        ("send Bearer 0123456789abcdefXYZ_- to it", "send Bearer [redacted:authorization] to it"),
        (
            "gh auth login --token 0123456789abcdef0123 && ls",
            "gh auth login --token [redacted:secret] && ls",
        ),
        (
            "mytool --db-password=s3cretvalue --verbose",
            "mytool --db-password=[redacted:secret] --verbose",
        ),
    ],
)
def test_http_credentials_and_secret_options(text: str, expected: str) -> None:
    assert redact(text) == Redacted(expected, 1)
    assert redact(expected) == Redacted(expected, 0)


@pytest.mark.parametrize(
    "text",
    [
        "Bearer tokens are sent in a header.",
        "Authorization: Bearer <token>",
        "run --token $GITHUB_TOKEN",
        "use --api-key=<your key>",
        "tool --password --verbose",
        "git log --oneline -- src/",
        "pass --tokens 5 to limit output",
    ],
)
def test_credential_lookalikes_are_kept(text: str) -> None:
    assert redact(text) == Redacted(text, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mysql -u root -pSup3rS3cretFlag -h db", "mysql -u root -p[redacted:password] -h db"),
        (
            "docker exec db mysqldump -uroot -p'S3cret pw' ledger > dump.sql",
            "docker exec db mysqldump -uroot -p'[redacted:password]' ledger > dump.sql",
        ),
        ("mariadb -pTr0ub4dor3 app", "mariadb -p[redacted:password] app"),
        (
            "sshpass -p ssHpassW0rd99 ssh -p 2222 deploy@host",
            "sshpass -p [redacted:password] ssh -p 2222 deploy@host",
        ),
        ("sshpass -pssHpassW0rd99 scp a host:", "sshpass -p[redacted:password] scp a host:"),
        (
            "redis-cli -h cache -p 6379 -a R3disAuthPassw0rd ping",
            "redis-cli -h cache -p 6379 -a [redacted:password] ping",
        ),
        (
            "curl -u admin:Adm1nPassw0rd https://api.example.com/v1",
            "curl -u admin:[redacted:password] https://api.example.com/v1",
        ),
        (
            "curl -s --user=ops:Pa55w0rd -U proxy:Pr0xyPw https://x",
            "curl -s --user=ops:[redacted:password] -U proxy:[redacted:password] https://x",
        ),
        (
            "docker login -u ci -p D0ckerHubPassw0rd registry.example.com",
            "docker login -u ci -p [redacted:password] registry.example.com",
        ),
        (
            "az login --service-principal -u http://app -p AzSpPassw0rd99 --tenant t1",
            "az login --service-principal -u http://app -p [redacted:password] --tenant t1",
        ),
        (  # a value already redacted (a private key given to -u) is not redacted again
            "curl -u -----BEGIN RSA PRIVATE KEY-----",
            "curl -u [redacted:private-key]",
        ),
        (  # a line of several commands: each reads its own arguments
            "curl -H 'X' https://x mysql -pSup3rS3cretFlag sshpass -p ssHpassW0rd99 ls",
            "curl -H 'X' https://x mysql -p[redacted:password] sshpass -p [redacted:password] ls",
        ),
    ],
)
def test_passwords_given_to_short_options(text: str, expected: str) -> None:
    found = redact(text)
    assert found.text == expected
    assert found.count == expected.count("[redacted:")
    assert redact(expected) == Redacted(expected, 0)


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p appdb",  # -p alone asks for the password; appdb is the database
        "mysql -u root -p$MYSQL_PWD",
        "ssh -p 2222 deploy@host",
        "sshpass -p $SSHPASS ssh host",
        "curl -u admin https://api.example.com",  # curl asks for the password
        "curl -u $USER:$TOKEN https://api.example.com",
        "docker login -u ci --password-stdin registry.example.com",
        "pip install -p 3 things; mysql -P 3306 -h db",
        "use curl -u to send credentials",
    ],
)
def test_short_options_that_hold_no_password_are_left_alone(text: str) -> None:
    assert redact(text) == Redacted(text, 0)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "git clone https://" + GITHUB + "@github.com/acme/ledger.git",
            "git clone https://[redacted:github-token]@github.com/acme/ledger.git",
        ),
        (
            "https://" + GITHUB + ":x-oauth-basic@github.com/acme/ledger.git",
            "https://[redacted:github-token]:x-oauth-basic@github.com/acme/ledger.git",
        ),
        (
            "https://oauth2:" + FAMILIES["gitlab-token"] + "@gitlab.com/acme/ledger.git",
            "https://oauth2:[redacted:gitlab-token]@gitlab.com/acme/ledger.git",
        ),
    ],
)
def test_a_token_used_as_a_urls_user_is_one_marker(url: str, expected: str) -> None:
    assert redact(url) == Redacted(expected, 1)
    assert redact(expected) == Redacted(expected, 0)


def test_redact_text_is_the_public_form() -> None:
    from hippo_core import redact_text

    assert redact_text(f"key {AWS_ID}") == "key [redacted:aws-access-key]"
    assert redact_text("nothing here") == "nothing here"


def test_a_pasted_model_call_marker_takes_no_session_out_of_the_index(
    claude_home: Path, tmp_path: Path
):
    """The poisoning review's F14: the marker of hippo's own model calls, pasted into a
    prompt (an error log, an issue), is text; only this machine's keyed line, first in a
    session's first prompt, leaves a session out."""
    from hippo_core.index.ingest import ingest
    from hippo_core.transcripts.privacy import model_call_line

    pasted = ClaudeSession(claude_home, "/p")
    pasted.prompt("The log says:\n<hippo-model-call>\nthen the worker died. Why?").answer("OOM.")
    pasted.write()
    first = ClaudeSession(claude_home, "/p")
    first.prompt('<hippo-model-call key="0000">\nforged with a key that is not ours')
    first.answer("ok").write()
    ours = ClaudeSession(claude_home, "/p")
    ours.prompt(f"{model_call_line()}\nhippo's own call").answer("ok").write()
    summary = ingest()
    assert summary.model_calls == 1
    with sqlite3.connect(Path(os.environ["HIPPO_HOME"]) / "index.sqlite") as conn:
        prompts = sorted(row[0] for row in conn.execute("SELECT prompt FROM turns"))
    assert prompts[0].startswith('<hippo-model-call key="0000">')
    assert prompts[1].startswith("The log says:\n<hippo-model-call>\nthen the worker died.")


@pytest.mark.parametrize(
    ("text", "expected", "count"),
    [
        (
            'curl -H "Authorization: Bearer $TOKEN" -H "Authorization: Bearer abc123def456ghi789"'
            " --token $GITHUB_TOKEN --password hunter2xyz --api-key k3y9x8c7q",
            'curl -H "Authorization: Bearer $TOKEN" -H "Authorization: Bearer '
            '[redacted:authorization]" --token $GITHUB_TOKEN --password [redacted:secret]'
            " --api-key [redacted:secret]",
            3,
        ),
        (
            "git clone https://u:${PASS}@h.example/a https://u:password@h.example/b "
            "https://u:realpass99@h2.example/c https://v:other77pw@h3.example/d",
            "git clone https://u:${PASS}@h.example/a https://u:password@h.example/b "
            "https://u:[redacted:password]@h2.example/c https://v:[redacted:password]@h3.example/d",
            2,
        ),
        (
            "git push https://u:realpass99@h.example/c --password hunter2xyz",
            "git push https://u:[redacted:password]@h.example/c --password [redacted:secret]",
            2,
        ),
        (
            "curl -u alice --proxy-user bob:s3cretpw -u carol:an0therpw https://x.example",
            "curl -u alice --proxy-user bob:[redacted:password] -u carol:[redacted:password] "
            "https://x.example",
            2,
        ),
    ],
)
def test_a_credential_left_alone_does_not_end_the_search_for_the_next(text, expected, count):
    """A placeholder (`$TOKEN`), a word (`password`) or `curl -u alice` asking for its password
    is left as it is, and every credential after it in the same text is still redacted, the
    text between them kept and each counted."""
    assert redact(text) == Redacted(expected, count)


def test_a_command_line_ends_where_its_command_does():
    """`curl`'s `-u` reaches to the end of its command, not into the next one's options."""
    text = "curl https://x.example; other -u bob:plainvalue"
    assert redact(text) == Redacted(text, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=hunter", "DB_PASSWORD=[redacted:secret]"),  # the .env form: a word
        ("DB_PASSWORD= hunter", "DB_PASSWORD= [redacted:secret]"),
        ("DB_PASSWORD: hunter", "DB_PASSWORD: [redacted:secret]"),
        ("DB_PASSWORD=abcd", "DB_PASSWORD=[redacted:secret]"),  # four characters are a value
        ("DB_PASSWORD=ab1", "DB_PASSWORD=ab1"),  # three are too few to be one
        ("DB_PASSWORD = hunter", "DB_PASSWORD = hunter"),  # code: `password = word`
        ("DB_PASSWORD\t= hunter", "DB_PASSWORD\t= hunter"),
        ("DB_PASSWORD =hunter", "DB_PASSWORD =hunter"),
    ],
)
def test_a_word_assigned_to_a_secret_name_is_a_value_only_without_spaces(text, expected):
    """A word of letters after `=` with no space is a `.env` value; with a space before the
    `=` it is code assigning a variable."""
    assert redact(text).text == expected


NAME_RUN = "x" * 200 + "token"  # a run of 205 name characters, the label at its end


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each command reads only its own arguments: mysql's `-u` is no curl option.
        ("curl https://h.example mysql -u app:dbname2; ls", None),
        ("sshpass -p Xylophone9 ssh host", "sshpass -p [redacted:password] ssh host"),
        ('sshpass -p "" ssh host', None),  # quotes around nothing
        ('sshpass -p "changeme" ssh host', None),  # a fill-in, inside its quotes
        (
            "curl -u bob:pa:ss99 https://h.example",
            "curl -u bob:[redacted:password] https://h.example",
        ),
        ("DB_PASSWORD : hunter", "DB_PASSWORD : [redacted:secret]"),  # YAML's `key : value`
        ("connect(password=user_input, retries=3)", None),  # an argument
        ("connect(password=user_input), then", None),
        ("auth.token.kind = 'opaque-v2'", None),  # a field of a token
        (
            "API_TOKEN=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "API_TOKEN=[redacted:secret]",  # 40 characters, but no AWS name: a plain secret
        ),
        (f"\n{NAME_RUN}=abcd1234\n", f"\n{NAME_RUN}=[redacted:secret]\n"),
        (f"x{NAME_RUN}=abcd1234\n", None),  # one name character more: data, not a name
        ("[redacted:secret]: rotated2024 yesterday", None),  # a marker is no name
    ],
)
def test_what_each_redaction_rule_takes_and_leaves(text: str, expected: str | None):
    assert redact(text) == Redacted(expected or text, 0 if expected is None else 1)


def test_only_this_machine_s_own_key_on_the_first_line_marks_hippo_s_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The key is made once and read back the same; before it exists, and when its file
    holds anything but letters and digits, there is no key, and no prompt is hippo's."""
    from hippo_core.transcripts.privacy import is_model_call, model_call_key, model_call_line

    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    assert model_call_key() == ""
    assert not is_model_call('<hippo-model-call key="">\nhi', "")
    line = model_call_line()
    assert model_call_line() == line == f'<hippo-model-call key="{model_call_key()}">'
    assert is_model_call(f"{line}\nfirst\nsecond\n", model_call_key())
    assert not is_model_call(f"first\n{line}\nsecond\n", model_call_key())
    (tmp_path / "home" / "model-call.key").write_text("not a key!\n")
    assert model_call_key() == ""
