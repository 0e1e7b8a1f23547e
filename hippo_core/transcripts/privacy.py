"""Redaction of private spans and secrets in transcript text, before anything is indexed.

The ingest calls :func:`redact` on every prompt, answer, title and handoff, and
:func:`is_private_session` on every human prompt; :func:`redact_text` is the public API's
form of it, for plugins that keep text (the sleep pack's fragments, briefs and cards).
Redaction is pattern-based: it replaces ``<private>...</private>`` spans, then the secret
shapes, labelled values and command-line passwords listed in ``docs/security.md``. Text
without any trigger substring, most of a corpus, costs one hint scan, an ASCII lower-casing
and a few substring searches.
"""

from __future__ import annotations

import re

from hippo_core.base.patterns import Lazy
from hippo_core.base.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

PRIVATE_SESSION_MARKER = "<private-session>"
#: How the first line of every prompt hippo sends a model (dream, review, sleep) begins: an
#: agent that keeps its model calls as transcripts (``claude -p``) must not feed them back
#: as sessions. The whole line carries this machine's key (:func:`model_call_line`).
MODEL_CALL_MARKER = "<hippo-model-call>"
_KEY_FILE = "model-call.key"
PRIVATE_OPEN = "<private>"
PRIVATE_REPLACEMENT = "[private]"


class Redacted(Record):
    """Text after redaction, and how many spans were replaced."""

    __slots__ = ("text", "count")
    text: str
    count: int

    def __init__(self, text: str, count: int) -> None:
        self._set(text=text, count=count)


def is_private_session(prompt: str) -> bool:
    """True when a line of ``prompt``, stripped of surrounding whitespace, is the marker."""
    return _has_line(prompt, PRIVATE_SESSION_MARKER)


def model_call_line() -> str:
    """The first line of the prompts hippo sends models from this machine: the marker with
    a key of this machine's own (``$HIPPO_HOME/model-call.key``, made once), so that a
    person or a page that pastes the marker cannot make a session look like hippo's."""
    import os

    from hippo_core.files.home import home_folder
    from hippo_core.files.owner_only import owner_only_write

    path = os.path.join(home_folder(), _KEY_FILE)
    key = _read_key(path)
    if not key:
        owner_only_write(path, os.urandom(12).hex() + "\n", top=home_folder())
        key = _read_key(path)
    return f'<hippo-model-call key="{key}">'


def _read_key(path: str) -> str:
    try:
        with open(path, encoding="ascii") as handle:
            found = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return found if found.isalnum() else ""


def model_call_key() -> str:
    """This machine's key for its model calls; empty before hippo sent any."""
    import os

    from hippo_core.files.home import home_folder

    return _read_key(os.path.join(home_folder(), _KEY_FILE))


def is_model_call(prompt: str, key: str) -> bool:
    """True for the first prompt of a session hippo itself sent a model from this machine
    (its first line is :func:`model_call_line`, with ``key``): that session is hippo's own
    call. The marker anywhere else, or with another key, is text like any other."""
    if not key or not prompt.startswith(MODEL_CALL_MARKER[:-1]):
        return False
    return prompt.split("\n", 1)[0].strip() == f'<hippo-model-call key="{key}">'


def _has_line(prompt: str, marker: str) -> bool:
    if marker not in prompt:
        return False
    return any(line.strip() == marker for line in prompt.splitlines())


def _edge(body: str) -> Lazy:
    # A shape must not start or end inside a longer word (`xAKIA...`, `...sk-` in `task-`).
    return Lazy(rf"(?<![\w-])(?:{body})(?![\w-])", re.ASCII)


#: (kind, trigger substrings, pattern), applied in this order.
_SHAPES: list[tuple[str, tuple[str, ...], Lazy]] = [
    (
        "private-key",
        ("-----BEGIN",),
        Lazy(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r".*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("jwt", ("eyJ",), _edge(r"eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*")),
    ("aws-access-key", ("AKIA", "ASIA"), _edge(r"A[KS]IA[A-Z0-9]{16}")),
    (
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _edge(r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,}"),
    ),
    # Literal first, so the scan is fast where `sk-` is common (`task-`, `risk-`); a key
    # holds a digit, kebab-case words do not.
    ("api-key", ("sk-",), Lazy(r"sk-(?<![\w-]sk-)(?=[A-Za-z_-]*\d)[\w-]{20,}", re.ASCII)),
    (
        "stripe-key",
        ("k_live_", "whsec_"),
        _edge(r"[sr]k_live_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"),
    ),
    ("slack-token", ("xox", "xapp-"), _edge(r"xox[abprse]-[A-Za-z0-9-]{10,}|xapp-[\w-]{20,}")),
    (
        "slack-webhook",
        ("hooks.slack.com/",),
        Lazy(r"(?<=hooks\.slack\.com/)(?:services|workflows)/[\w/-]{20,}", re.ASCII),
    ),
    ("google-api-key", ("AIza",), _edge(r"AIza[\w-]{35}")),
    ("google-oauth-secret", ("GOCSPX-",), _edge(r"GOCSPX-[\w-]{28}")),
    (
        "gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-"),
        _edge(r"gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[\w-]{20,}"),
    ),
    ("npm-token", ("npm_",), _edge(r"npm_[A-Za-z0-9]{36}")),
    ("pypi-token", ("pypi-AgE",), _edge(r"pypi-AgE[\w-]{50,}")),
    ("huggingface-token", ("hf_",), _edge(r"hf_[A-Za-z0-9]{34,}")),
    ("sendgrid-key", ("SG.",), _edge(r"SG\.[\w-]{22}\.[\w-]{43}")),
    ("twilio-key", ("SK",), _edge(r"SK[0-9a-fA-F]{32}")),
    ("mailgun-key", ("key-",), _edge(r"key-[0-9a-f]{32}")),
    (
        "shopify-token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        _edge(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ),
    ("digitalocean-token", ("_v1_",), _edge(r"do[opr]_v1_[a-f0-9]{64}")),
    (
        "discord-token",
        (".",),
        _edge(r"[MNO][A-Za-z0-9_-]{23,27}\.[\w-]{6}\.[\w-]{27,40}"),
    ),
    (
        "discord-webhook",
        ("/api/webhooks/",),
        Lazy(r"(?<=/api/webhooks/)\d{16,20}/[\w-]{60,}", re.ASCII),
    ),
    ("telegram-bot-token", (":AA",), _edge(r"\d{8,10}:AA[\w-]{33}")),
    (
        "azure-key",
        ("AccountKey=", "SharedAccessKey=", "sig="),
        Lazy(
            r"(?<=AccountKey=)[A-Za-z0-9+/]{40,}={0,2}|(?<=SharedAccessKey=)[A-Za-z0-9+/]{40,}={0,2}"
            r"|(?<=[?&]sig=)[A-Za-z0-9%+/]{40,}={0,2}",
            re.ASCII,
        ),
    ),
]
#: Where any shape could start, in one scan anchored on a rarer character of each trigger
#: (``J`` of ``eyJ``, ``_`` of ``ghp_``): much faster than a search per trigger.
_SHAPE_HINT = Lazy(
    r"-(?<=-----)(?=BEGIN)|J(?<=eyJ)|A(?=[KS]IA|Iza)|-(?<=sk-)|x(?=ox|app-)"
    r"|_(?<=gh[pousr]_)|_(?<=github_pat_)|_(?<=k_live_)|_(?<=whsec_)"
    r"|/(?<=hooks\.slack\.com/)|-(?<=GOCSPX-)|l(?<=gl)(?=(?:pat|dt|rt|ptt|cbt|ft|soat)-)"
    r"|_(?<=npm_)|-(?<=pypi-)|_(?<=hf_)|\.(?<=SG\.)|K(?<=SK)(?=[0-9a-fA-F]{32})"
    r"|-(?<=key-)|_(?<=shp[a-z]{2}_)|_(?<=_v1_)|\.(?=[\w-]{6}\.[\w-]{27})"
    r"|/(?<=/api/webhooks/)|:(?=AA[\w-]{33})|=(?<=Key=)|=(?<=sig=)"
)
#: ``scheme://user:PASSWORD@host``; the password runs to the last ``@`` of the authority. The
#: user has no ``[``, so a token used as the user, already ``[redacted:kind]``, is no user.
_URL_PASSWORD = Lazy(r"://(?<=\w://)[^\s:/@\[\]]*:(?P<secret>[^\s/?#]+)@(?=[\w\[])")

#: An HTTP credential: ``Authorization: Bearer <token>`` (or Basic, Token), or a bare
#: ``Bearer <token>``; the credential is at least 16 characters, so prose ("Bearer tokens")
#: is left alone.
_AUTH_HEADER = Lazy(
    r"(?:\b(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:Bearer|Basic|Token)|\bBearer)[ \t]+"
    r"(?P<secret>[A-Za-z0-9._~+/=-]{16,})"
)
#: A command-line option naming a secret, then its value: ``--token VALUE``,
#: ``--db-password=VALUE``.
_SECRET_OPTION = Lazy(
    r"(?<![\w-])--[\w-]*?(?:token|secret|password|passwd|api-?key)(?:[ \t]+|=)"
    r"(?P<secret>[^\s\"'`]+)",
    re.IGNORECASE,
)

#: Commands whose short option takes a password (:data:`_SHORT_OPTIONS`). mysql's ``-p``
#: takes only an attached value: ``mysql -p appdb`` asks for the password and opens the
#: database ``appdb``.
_SHORT_COMMANDS = Lazy(
    r"(?<![\w.-])(?:mysql(?:admin|dump|import|show|check|slap)?|mariadb(?:-admin|-dump)?"
    r"|sshpass|redis-cli|curl|docker[ \t]+login|az[ \t]+login)(?![\w.-])"
)
#: Where a command's arguments end: the line, a pipe, a `;` or an `&&` (or the next command).
_COMMAND_END = Lazy(r"[\n|;&]")
_VALUE = r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`]+)"
#: Each command's option and whether only its first one counts (``sshpass -p PASS ssh -p 22``).
_SHORT_OPTIONS: dict[str, tuple[Lazy, bool]] = {
    "mysql": (Lazy(r"(?<!\S)-p" + _VALUE), True),
    "sshpass": (Lazy(r"(?<!\S)-p[ \t]*" + _VALUE), True),
    "redis-cli": (Lazy(r"(?<!\S)(?:-a|--pass)[ \t]+" + _VALUE), True),
    "curl": (
        Lazy(r"(?<!\S)(?:-u[ \t]*|-U[ \t]*|--user[ \t=]+|--proxy-user[ \t=]+)" + _VALUE),
        False,
    ),
    "login": (Lazy(r"(?<!\S)-p[ \t]*" + _VALUE), True),
}
_SHORT_TRIGGERS = ("mysql", "mariadb", "sshpass", "redis-cli", "curl", "login")

#: Lower-case substrings without which no name labels a secret.
_NAME_TRIGGERS = (b"token", b"secret", b"passw", b"pwd", b"key", b"credential")
#: A word that makes a name a label; ``tokens`` and ``tokenizer`` are not labels.
_LABEL = Lazy(
    r"token(?!s|i[sz])|secret|passw(?:or)?d|(?<![a-z])pwd(?![a-z])|(?-i:(?<=[a-z])Pwd)"
    r"|(?:api|private|access)[_-]?key|credential",
    re.IGNORECASE,
)
REDACTED_PREFIX = "[redacted:"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_NAME_RUN = Lazy(r"[\w.-]*", re.ASCII)
_LONGEST_NAME = 200  # a longer run of name characters is data (base64, a hash), not a name
_ASSIGNMENT = Lazy(
    r"""(?P<name>[\w.-]+)(?P<quote>["']?)\]?
    (?P<op>[ \t]*(?::=|=>|=(?![=~>])|:)[ \t]*)
    (?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s"'`]+)""",
    re.VERBOSE | re.ASCII,
)
#: A reference, template or fill-in, not a value: ``$TOKEN``, ``${{ secrets.X }}``,
#: ``%KEY%``, ``<your token>``, ``***``, ``changeme``, ``YOUR_API_KEY``, an earlier redaction.
_PLACEHOLDER = Lazy(
    r"[$%{<\[(@!&*:\\].*|[xX*#?.-]{3,}|your.*|change[_-]?me|placeholder|dummy|redacted",
    re.IGNORECASE | re.DOTALL,
)
#: A number, a constant or type name, a path or a URL.
_LITERAL = Lazy(
    r"""[-+]?\d[\d_.,]*
    | (?:none|null|nil|undefined|true|false|yes|no|on|off|str|string|int|float|number|bool
       |boolean|bytes|any|unknown|optional|secretstr|required|lambda|function|await|[|>][-+]?)
    | (?:~|\.{1,2})?/.* | \w+://.*""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
#: Code rather than a value: an attribute path, a call or a subscript.
_CODE = Lazy(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+|[A-Za-z_][\w.:]*[(\[].*", re.DOTALL)
_IDENTIFIER = Lazy(r"[A-Za-z_]\w*")
_WORD = Lazy(r"[A-Za-z_]+")
#: A value that is a name: words joined by `_`, `-` or `.`, or camelCase, with no digit.
_NAMELIKE = Lazy(r"[A-Za-z]+(?:[_.-][A-Za-z]+)+|[a-z]+(?:[A-Z][a-z]*)+")
_AWS_SECRET_NAME = Lazy(r"(?i)secret[_-]?access[_-]?key|aws[_-]?secret")
_AWS_SECRET_VALUE = Lazy(r"[A-Za-z0-9/+]{40}")


def redact(text: str) -> Redacted:
    """``text`` with private spans and secrets replaced; see ``docs/security.md``."""
    count = 0
    if PRIVATE_OPEN in text:
        text, count = _hide_private(text)
    if _SHAPE_HINT.search(text):
        for kind, triggers, pattern in _SHAPES:
            if any(trigger in text for trigger in triggers):
                text, found = pattern.subn(f"[redacted:{kind}]", text)
                count += found
    if "://" in text:
        text, found = _redact_url_passwords(text)
        count += found
    if "earer" in text or "uthorization" in text or "--" in text:
        text, found = _redact_credentials(text)
        count += found
    if any(command in text for command in _SHORT_TRIGGERS):
        text, found = _redact_short_options(text)
        count += found
    # ASCII-folded, one byte per character, so positions in it are positions in `text`.
    folded = text.encode("ascii", "replace").lower()
    hits = sorted(at for word in _NAME_TRIGGERS for at in _find_all(folded, word))
    if hits:
        text, found = _redact_assignments(text, hits)
        count += found
    return Redacted(text, count)


def redact_text(text: str) -> str:
    """``text`` with private spans and secrets replaced, as ``hippo ingest`` keeps a
    transcript's text; already redacted text comes back unchanged."""
    return redact(text).text


def _find_all(data: bytes, word: bytes) -> list[int]:
    found: list[int] = []
    at = data.find(word)
    while at >= 0:
        found.append(at)
        at = data.find(word, at + len(word))
    return found


def _hide_private(text: str) -> tuple[str, int]:
    """Replace each outermost private span; spans nest, and an unclosed one runs to the end."""
    pieces: list[str] = []
    kept = depth = count = 0
    for tag in re.finditer(r"</?private>", text):
        if tag.group() == PRIVATE_OPEN:
            if depth == 0:
                pieces.append(text[kept : tag.start()])
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                pieces.append(PRIVATE_REPLACEMENT)
                count += 1
                kept = tag.end()
    if depth:
        return "".join([*pieces, PRIVATE_REPLACEMENT]), count + 1
    return "".join([*pieces, text[kept:]]), count


def _redact_credentials(text: str) -> tuple[str, int]:
    """Authorization headers and secret-naming command-line options."""
    count = 0
    for pattern, kind in ((_AUTH_HEADER, "authorization"), (_SECRET_OPTION, "secret")):
        pieces: list[str] = []
        kept = 0
        for match in pattern.finditer(text):
            secret = match.group("secret")
            if secret.startswith(("[redacted", "-")) or _PLACEHOLDER.fullmatch(secret):
                continue  # already redacted, another option, or `--token $GITHUB_TOKEN`
            pieces += [text[kept : match.start("secret")], f"[redacted:{kind}]"]
            kept = match.end("secret")
            count += 1
        text = "".join([*pieces, text[kept:]])
    return text, count


def _redact_short_options(text: str) -> tuple[str, int]:
    """Passwords given to a command's short option: ``mysql -pPASS``, ``sshpass -p PASS``,
    ``redis-cli -a PASS``, ``curl -u user:PASS``, ``docker login -p PASS``."""
    spans: set[tuple[int, int]] = set()
    commands = list(_SHORT_COMMANDS.finditer(text))
    # Each command reads its own arguments, up to the next one (`curl ... mysql -pPASS` on
    # one line too): every character is read once.
    for at, command in enumerate(commands):
        name = command.group()
        key = "login" if name.endswith("login") else "mysql" if name.startswith("m") else name
        pattern, first_only = _SHORT_OPTIONS[key]
        reach = commands[at + 1].start() if at + 1 < len(commands) else len(text)
        stop = _COMMAND_END.search(text, command.end(), reach)
        for option in pattern.compiled.finditer(
            text, command.end(), stop.start() if stop else reach
        ):
            start, end = option.span("secret")
            secret = option.group("secret")
            if secret[0] in "\"'" and len(secret) > 1:
                start, end, secret = start + 1, end - 1, secret[1:-1]
            if key == "curl" and not secret.startswith(("[redacted", "-")):
                # (a value redacted already, `curl -u <a private key>`, is one marker)
                user, colon, secret = secret.partition(":")
                if not colon or "[redacted" in user:
                    # `curl -u user` asks for the password; a colon after a marker is the
                    # marker's own (`-u TOKEN[redacted:github-token]`): redacted already
                    continue
                start += len(user) + 1
            if secret and not (
                secret.startswith(("[redacted", "-")) or _PLACEHOLDER.fullmatch(secret)
            ):
                spans.add((start, end))
            if first_only:
                break
    pieces: list[str] = []
    kept = count = 0
    for start, end in sorted(spans):
        if start >= kept:
            pieces += [text[kept:start], "[redacted:password]"]
            kept = end
            count += 1
    return "".join([*pieces, text[kept:]]), count


def _redact_url_passwords(text: str) -> tuple[str, int]:
    pieces: list[str] = []
    kept = count = 0
    for match in _URL_PASSWORD.finditer(text):
        secret = match.group("secret")
        if _PLACEHOLDER.fullmatch(secret) or _LABEL.fullmatch(secret):
            continue  # `https://user:${PASS}@host`, `https://user:password@host`
        pieces += [text[kept : match.start("secret")], "[redacted:password]"]
        kept = match.end("secret")
        count += 1
    return "".join([*pieces, text[kept:]]), count


def _redact_assignments(text: str, hits: list[int]) -> tuple[str, int]:
    """Replace the values of assignments whose name is a label, keeping the name.

    ``hits`` are positions, in order, where a label may start; the name is the run of name
    characters around each.
    """
    pieces: list[str] = []
    kept = seen = count = 0
    for hit in hits:
        if hit < seen:
            continue  # inside a name or value already read
        start, floor = hit, max(kept, hit - _LONGEST_NAME)
        while start > floor and text[start - 1] in _NAME_CHARS:
            start -= 1
        seen = _run_end(text, hit)  # later hits in this run are the same name
        if text.endswith(REDACTED_PREFIX, 0, start):
            continue  # the kind in an earlier `[redacted:secret]`, not a name
        match = _ASSIGNMENT.match(text, start)
        if match is None or (start == floor > kept and text[start - 1] in _NAME_CHARS):
            continue
        name = match.group("name")
        if not _LABEL.search(name.rsplit(".", 1)[-1]):
            continue  # `token.type = ...` sets a field of a token, not a secret
        span = _secret_span(text, match)
        if span is None:
            continue
        value = text[span[0] : span[1]]
        kind = "secret"
        if _AWS_SECRET_NAME.search(name) and _AWS_SECRET_VALUE.fullmatch(value):
            kind = "aws-secret-key"
        pieces += [text[kept : span[0]], f"[redacted:{kind}]"]
        kept = seen = span[1]
        count += 1
    pieces.append(text[kept:])
    return "".join(pieces), count


def _names_a_secret(name: str) -> bool:
    """The name ends with its label word: ``secret``, ``db_password``, ``apiKey``, not
    ``token_type`` or ``password_policy`` (which name something about a secret)."""
    found = list(_LABEL.finditer(name))
    return bool(found) and found[-1].end() == len(name)


def _run_end(text: str, at: int) -> int:
    run = _NAME_RUN.match(text, at)
    return run.end() if run else at


def _secret_span(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    """Where the assigned value lies in ``text``, or None when it is not taken as a secret."""
    quote, op, raw = match.group("quote", "op", "value")
    if quote and text[match.start() - 1 : match.start()] != quote:
        return None  # `"AWS::ApiGateway::ApiKey": ...` is no plain name
    if not quote and op.strip() == ":" and op[-1] not in " \t":
        return None  # `secret:name` in an ARN, `{token:056d}`; YAML has a space after `:`
    start, end = match.span("value")
    quoted = raw[0] in "\"'"
    if quoted:
        start, end = start + 1, end - 1
    else:
        end = start + len(raw.rstrip(".,;:)]}>"))
    value = text[start:end]
    if _AWS_SECRET_NAME.search(match.group("name")) and _AWS_SECRET_VALUE.fullmatch(value):
        return start, end  # an AWS secret key, though it may start with `/` like a path
    if len(value.strip()) < 4 or _PLACEHOLDER.fullmatch(value) or _LITERAL.fullmatch(value):
        return None
    if _LABEL.search(value) and (_NAMELIKE.fullmatch(value) or _LABEL.fullmatch(value)):
        return None  # a name or a description: `next_token`, `proposed_password`
    if not quoted:
        if _CODE.fullmatch(value):
            return None
        # An identifier closed by `,` or `)` is an argument or an object field.
        if _IDENTIFIER.fullmatch(value) and raw[len(value) : len(value) + 1] in (",", ")"):
            return None
        # `name = word` is code, `name: Type` a type, where a password has a digit or symbol;
        # after a colon a word in lower case is a value (YAML's `secret: topsecretvalue`).
        if _WORD.fullmatch(value) and (
            (op.strip() != ":" and op[0] in " \t")
            or (op.strip() == ":" and not (value.islower() and _names_a_secret(match["name"])))
        ):
            return None
    return start, end
