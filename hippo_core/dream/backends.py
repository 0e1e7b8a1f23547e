"""The two built-in model backends.

``command`` runs the program in ``model_command`` without a shell, writes the prompt to its
standard input and reads the reply from its standard output. ``openai`` posts the prompt to
an OpenAI-compatible chat completions endpoint (llama-server, vLLM, Ollama, a hosted API).
docs/models.md is the user's side of both contracts.

Both read at most :data:`MAX_REPLY_BYTES` of a reply: a longer one is dropped and reported
as ``too_large``, never kept in memory. Anything that stops the model answering at all
raises :class:`~hippo_core.dream.model.ModelUnreachable` with one line saying what happened.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError
from hippo_core.dream.model import Call, ModelUnreachable, Reply
from hippo_core.files.home import user_path
from hippo_core.files.model_folder import OWNER, PREFIX

if TYPE_CHECKING:
    import http.client
    import subprocess
    import threading
    import urllib.error
    import urllib.request

    from hippo_core.workspace.folder import Workspace

MAX_REPLY_BYTES = 16 * 1024 * 1024
"""The most bytes of a reply hippo reads; a longer reply is ``too_large``."""

SYSTEM_FILE = "{system_file}"
"""In a ``model_command`` argument: the path of a file holding the system prompt."""

_CHUNK = 64 * 1024
_STDERR_TAIL = 8 * 1024
#: How :class:`OpenAIBackend` may send a JSON schema the answer must meet.
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")
_SHOWN = 200
"""Characters of a program's stderr line or a server's error body that a message quotes."""
_GRACE = 2.0
"""Seconds to wait for a finished program's output pipes to close before killing what
still holds them (a background child it left behind)."""


@dataclass
class CommandBackend:
    """Runs ``argv`` without a shell: the prompt on stdin, the reply from stdout.

    An argument containing ``{system_file}`` gets the path of a temporary file holding
    the system prompt. Without one, a system prompt goes first on stdin, then a blank
    line, then the prompt. The program runs in ``cwd``, by default a fresh temporary
    folder: an agent used as the model then records its run outside the workspace, so
    the next ingest does not make hippo's own prompts into sessions of the workspace.
    """

    argv: tuple[str, ...]
    timeout: float
    cwd: Path | None = None
    name: str = "command"

    @classmethod
    def from_workspace(cls, workspace: Workspace) -> CommandBackend:
        settings = workspace.settings
        if not settings.model_command:
            raise HippoError(
                "no model configured: set model_command in .hippo/settings.toml "
                "(see docs/models.md)"
            )
        argv = list(settings.model_command)
        program = user_path(argv[0])
        if not program.is_absolute() and len(program.parts) > 1:
            # A wrapper script given relative to the workspace, such as ./.hippo/model.sh.
            argv[0] = str(workspace.root / program)
        return cls(tuple(argv), settings.model_timeout_seconds)

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        """``json_schema`` is ignored: a program on a pipe has no way to be held to one."""
        stdin = marked(prompt).encode("utf-8")
        if not any(SYSTEM_FILE in arg for arg in self.argv):
            if system is not None:  # the system prompt first on stdin, after the marker
                stdin = marked(system.rstrip("\n") + "\n\n" + prompt).encode("utf-8")
            return self._run(self.argv, stdin, extra_bytes_in=0)

        import tempfile

        system_bytes = (system or "").encode("utf-8")
        handle, path = tempfile.mkstemp(prefix="hippo-system-", suffix=".txt")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(system_bytes)
            argv = tuple(arg.replace(SYSTEM_FILE, path) for arg in self.argv)
            return self._run(argv, stdin, extra_bytes_in=len(system_bytes))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _run(self, argv: tuple[str, ...], stdin: bytes, *, extra_bytes_in: int) -> Reply:
        import tempfile

        if self.cwd is None:
            with tempfile.TemporaryDirectory(prefix=PREFIX) as folder:
                # Whose folder it is: a later run removes it once this process is gone.
                Path(folder, OWNER).write_text(f"{os.getpid()}\n", encoding="ascii")
                return self._run_in(Path(folder), argv, stdin, extra_bytes_in)
        return self._run_in(self.cwd, argv, stdin, extra_bytes_in)

    def _run_in(self, cwd: Path, argv: tuple[str, ...], stdin: bytes, extra_bytes_in: int) -> Reply:
        import threading

        started = time.monotonic()
        process = _start(argv, cwd)
        out = _CappedReader(process.stdout, on_overflow=lambda: _kill(process))
        err = _TailReader(process.stderr)
        workers = {
            process.stdin: threading.Thread(target=_feed, args=(process.stdin, stdin)),
            process.stdout: threading.Thread(target=out.run),
            process.stderr: threading.Thread(target=err.run),
        }
        finished = False
        try:
            for thread in workers.values():
                thread.daemon = True
                thread.start()
            # Popen.wait(timeout=) polls with sleeps of up to 50 ms; a thread blocked in
            # wait() wakes the moment the program exits.
            waiter = threading.Thread(target=process.wait, daemon=True)
            waiter.start()
            waiter.join(self.timeout)
            if waiter.is_alive():
                raise ModelUnreachable(f"model_command timed out after {self.timeout:g} s")
            code = process.returncode
            finished = _join(workers.values(), _GRACE)
        finally:
            if not finished:
                _kill(process)
                process.wait()
            _release(workers)
        call = Call("command", len(stdin) + extra_bytes_in, out.size, time.monotonic() - started)
        if out.too_large:
            return Reply(text="", call=call, too_large=True)
        if code != 0:
            raise ModelUnreachable(_failure(code, err.last_line()))
        return Reply(text=b"".join(out.chunks).decode("utf-8", errors="replace"), call=call)


def _start(argv: tuple[str, ...], cwd: Path | None) -> subprocess.Popen[bytes]:
    import subprocess

    try:
        # A session of its own, so that a timeout kills whatever the program started too.
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ModelUnreachable(
            f"model_command: program {argv[0]!r} not found; "
            "check model_command in .hippo/settings.toml"
        ) from None
    except OSError as exc:
        raise ModelUnreachable(
            f"model_command: program {argv[0]!r} cannot be run ({exc.strerror}); "
            "check model_command in .hippo/settings.toml"
        ) from None


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the program and everything in its session; quiet when they are gone."""
    if os.name != "posix":
        with contextlib.suppress(OSError):
            process.kill()
        return
    import signal

    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)


def _release(workers: dict[IO[bytes] | None, threading.Thread]) -> None:
    """Close the pipes once their threads are done with them.

    A pipe still held open by a process outside the program's session keeps its thread
    (a daemon) blocked; that pipe is left to it rather than closed under its feet.
    """
    _join(workers.values(), _GRACE)
    for pipe, thread in workers.items():
        if pipe is not None and not thread.is_alive():
            with contextlib.suppress(OSError):
                pipe.close()


def _join(threads: Collection[threading.Thread], seconds: float) -> bool:
    """Wait up to ``seconds`` in all for ``threads`` to end; whether they all did."""
    deadline = time.monotonic() + seconds
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    # A program may stop reading (or never start): a broken pipe is its answer, not ours.
    with contextlib.suppress(OSError):
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


@dataclass
class _CappedReader:
    """Reads a pipe to its end, keeping at most :data:`MAX_REPLY_BYTES`."""

    pipe: IO[bytes] | None
    on_overflow: Callable[[], None]
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    too_large: bool = False

    def run(self) -> None:
        if self.pipe is None:
            return
        fd = self.pipe.fileno()
        while chunk := os.read(fd, _CHUNK):
            self.size += len(chunk)
            if self.size > MAX_REPLY_BYTES:
                self.too_large = True
                self.chunks.clear()
                self.on_overflow()
                return
            self.chunks.append(chunk)


@dataclass
class _TailReader:
    """Reads a pipe to its end, keeping only its last bytes."""

    pipe: IO[bytes] | None
    tail: bytes = b""

    def run(self) -> None:
        if self.pipe is None:
            return
        fd = self.pipe.fileno()
        while chunk := os.read(fd, _CHUNK):
            self.tail = (self.tail + chunk)[-_STDERR_TAIL:]

    def last_line(self) -> str:
        lines = self.tail.decode("utf-8", errors="replace").splitlines()
        return next((line.strip() for line in reversed(lines) if line.strip()), "")


def _failure(code: int, stderr_line: str) -> str:
    what = (
        f"model_command was killed by signal {-code}"
        if code < 0
        else f"model_command exited with {code}"
    )
    if not stderr_line:
        return f"{what} (nothing on stderr)"
    return f"{what}: {_shorten(stderr_line)}"


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def marked(prompt: str) -> str:
    """The prompt as sent: after a first line saying it is hippo's own model call, so that an
    agent which keeps its calls as transcripts (``claude -p``) never has them read back as
    sessions or evidence (ingest leaves them out)."""
    from hippo_core.transcripts.privacy import model_call_line

    return f"{model_call_line()}\n{prompt}"


def api_key_from_env(variable: str, setting: str) -> str | None:
    """The API key in the environment variable ``variable`` (None when none is named);
    raises :class:`HippoError` naming ``setting`` when the variable is not set."""
    if not variable:
        return None
    key = os.environ.get(variable)
    if not key:
        raise HippoError(
            f"{setting} names {variable}, which is not set in the environment; export it, "
            "or change the setting in .hippo/settings.toml"
        )
    return key


@dataclass
class OpenAIBackend:
    """Posts to ``<url>/chat/completions`` of an OpenAI-compatible server. ``response_format``
    says how a ``json_schema`` is sent: ``"json_schema"`` (OpenAI's form), ``"json_object"``
    (the schema beside ``{"type": "json_object"}``, as llama-cpp-python's server takes it),
    ``"none"``, or ``"auto"`` (the default): the first, then the second, then none, each time
    a server refuses one; ``on_format(form, refusal)`` hears the form it settled on.

    ``url`` is the chat completions address itself. The request asks for
    ``temperature`` 0 and at most ``max_tokens``; the reply is
    ``choices[0].message.content``.
    """

    url: str
    model: str
    max_tokens: int
    timeout: float
    api_key: str | None = field(default=None, repr=False)
    name: str = "openai"
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Merged into every request (``chat_template_kwargs`` and the like)."""
    response_format: str = "auto"
    """How a ``json_schema`` given to :meth:`complete` is sent, one of
    :data:`RESPONSE_FORMATS`: ``json_schema`` is OpenAI's form (OpenAI, vLLM, Ollama,
    llama.cpp's ``llama-server``), ``json_object`` puts the schema beside
    ``{"type": "json_object"}`` (llama-cpp-python's server, ``llama-server``), ``none``
    sends no schema, and ``auto`` tries them in that order. A server that refuses a form
    (:func:`refused_schema`) is asked again at once with the next one, ``none`` last, and
    the form stays for the backend's later calls."""
    on_format: Callable[[str, str], None] | None = field(default=None, repr=False)
    """Called with the next form and the refusal when a server refused one."""

    @classmethod
    def from_workspace(cls, workspace: Workspace) -> OpenAIBackend:
        settings = workspace.settings
        table = settings.openai
        key = api_key_from_env(table.api_key_env, "openai.api_key_env")
        url = table.url.rstrip("/") + "/chat/completions"
        return cls(
            url,
            table.model,
            table.max_tokens,
            settings.model_timeout_seconds,
            key,
            extra_body=dict(table.extra_body),
        )

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        import json
        import urllib.request

        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": marked(prompt)})
        fields: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            **self.extra_body,
        }
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        started = time.monotonic()
        setting, refusal = self.response_format, ""
        while True:
            form = _FORMS[setting][0] if json_schema is not None else "none"
            body = json.dumps({**fields, **_schema_fields(form, json_schema)}).encode("utf-8")
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                raw, size = self._send(request, deadline=started + self.timeout)
            except ModelUnreachable as exc:
                if form == "none" or not refused_schema(exc):
                    raise
                setting, refusal = _FORMS[setting][1], str(exc)
                continue
            break
        if refusal:  # the form that was refused is never sent again by this backend
            self.response_format = setting
            if self.on_format is not None:
                self.on_format(setting, refusal)
        if raw is None:
            call = Call("openai", len(body), size, time.monotonic() - started)
            return Reply(text="", call=call, too_large=True)
        content, finish = self._content(raw)
        seconds = time.monotonic() - started
        call = Call("openai", len(body), len(content.encode("utf-8")), seconds)
        return Reply(content, call, cut_off=finish == "length")

    def _send(
        self, request: urllib.request.Request, *, deadline: float
    ) -> tuple[bytes | None, int]:
        """The response body and its size; None for a body over :data:`MAX_REPLY_BYTES`,
        with the bytes read before it was dropped."""
        import http.client
        import urllib.error

        from hippo_core.base.outbound import outbound_opener

        # The key goes to this url only: a redirect is refused, never followed.
        opener = outbound_opener(allow_link_local=True)
        try:
            with opener.open(request, timeout=self.timeout) as response:
                if response.length is not None and response.length > MAX_REPLY_BYTES:
                    return None, 0
                return _read_capped(response, deadline)
        except HippoError as exc:
            raise self._unreachable(str(exc)) from None
        except urllib.error.HTTPError as exc:
            with exc:
                raise self._unreachable(
                    f"answered HTTP {exc.code}: {_error_body(exc)}", status=exc.code
                ) from None
        except urllib.error.URLError as exc:
            raise self._unreachable(self._reason(exc.reason)) from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._unreachable(self._reason(exc)) from None

    def _content(self, raw: bytes) -> tuple[str, str]:
        """The answer's text and its ``finish_reason`` ("length": cut off at max_tokens)."""
        import json

        try:
            data = json.loads(raw)
        except ValueError:
            raise self._unreachable(
                f"answered with something that is not JSON: {_snippet(raw)}"
            ) from None
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
            finish = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError):
            content, finish = None, None
        if not isinstance(content, str):
            raise self._unreachable(
                "the answer is not in the chat completions shape (no string at "
                f"choices[0].message.content): {_snippet(raw)}"
            )
        return content, finish if isinstance(finish, str) else ""

    def _reason(self, reason: object) -> str:
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused; is the server running?"
        if isinstance(reason, TimeoutError):
            return f"no answer within {self.timeout:g} s"
        if isinstance(reason, OSError) and reason.strerror:
            return f"the connection failed ({reason.strerror})"
        return f"the connection failed ({reason or type(reason).__name__})"

    def _unreachable(self, what: str, *, status: int | None = None) -> ModelUnreachable:
        return ModelUnreachable(f"openai backend at {self.url}: {what}", status=status)


def _read_capped(response: http.client.HTTPResponse, deadline: float) -> tuple[bytes | None, int]:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(_CHUNK):
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            return None, size
        # The socket timeout bounds each read; this bounds a server that trickles.
        if time.monotonic() > deadline:
            raise TimeoutError
        chunks.append(chunk)
    return b"".join(chunks), size


#: Each form: what is sent, and the form that follows when a server refuses it.
_FORMS = {
    "auto": ("json_schema", "json_object"),
    "json_schema": ("json_schema", "none"),
    "json_object": ("json_object", "none"),
    "none": ("none", "none"),
}


def _schema_fields(form: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    if schema is None or form == "none":
        return {}
    if form == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": schema},
        }
    }


def refused_schema(exc: ModelUnreachable) -> bool:
    """Whether a server refused the request for its ``response_format``: HTTP 400 or 422,
    or a 500 whose error names the field (llama-cpp-python's validation error)."""
    return exc.status in (400, 422) or (exc.status == 500 and "response_format" in str(exc))


def _error_body(exc: urllib.error.HTTPError) -> str:
    """A short piece of an HTTP error's body: the ``error.message`` of a JSON body."""
    import json

    try:
        raw = exc.read(4096)
    except OSError:
        return "(no body)"
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _shorten(error["message"])
    if isinstance(error, str):
        return _shorten(error)
    return _snippet(raw) or "(no body)"


def _snippet(raw: bytes) -> str:
    return _shorten(raw[: _SHOWN * 4].decode("utf-8", errors="replace"))
