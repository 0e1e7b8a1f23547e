"""The drafting model: :func:`backend_for` gives the backend a sleep asks, and its server is
on only when needed: started when a sleep or a redraft asks
for the model, kept warm ``keep_warm_seconds`` after its last call, stopped by the first
tick after that or as soon as no chain is open (the cycle is over), and stopped before the
main model is woken with ``handover``. A server that already answered before hippo started
one is somebody else's: used, never stopped. What hippo started is remembered in
``.hippo/sleep/model.json`` (its pid and when it was last used), so the next command, or
the service's next tick, can stop it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from hippo_core import HippoError, process_alive
from hippo_packs.sleep.records import store

if TYPE_CHECKING:
    from hippo_core import ModelBackend, Reply, Workspace
    from hippo_packs.sleep.config import SleepLifecycle, SleepSettings


class Host(Protocol):
    """What the model needs of the cycle it drafts for (a
    :class:`~hippo_packs.sleep.cycle.Cycle` is one): below the cycle, it knows no more."""

    workspace: Workspace
    settings: SleepSettings
    model: ModelBackend | None

    def emit(self, name: str, **data: Any) -> dict[str, Any]: ...


def backend_for(cycle: Host) -> ModelBackend:
    """The backend that drafts: the cycle's own override (an eval's recording), else
    ``[sleep.model]``'s endpoint, behind :class:`Managed` when hippo runs its server (it is
    started by the first call that needs it, not before)."""
    if cycle.model is not None:
        return cycle.model
    from hippo_core import OpenAIBackend, api_key_from_env

    model = cycle.settings.model
    backend = OpenAIBackend(
        model.url.rstrip("/") + "/chat/completions",
        model.name,
        model.max_tokens,
        model.timeout_seconds,
        api_key_from_env(model.api_key_env, "sleep.model.api_key_env"),
        extra_body=dict(model.extra_body),
        response_format=response_format(cycle),
        on_format=lambda form, why: _remember_format(cycle, form, why),
    )
    return Managed(backend, cycle) if managed(cycle) else backend


def _formats_key(cycle: Host) -> str:
    model = cycle.settings.model
    return f"{model.url.rstrip('/')} {model.response_format}"


def response_format(cycle: Host) -> str:
    """How the answer's schema is sent to this server: the form it settled on after
    refusing one (``.hippo/sleep/formats.json``), else what ``response_format`` says; for
    ``auto``, llama-cpp-python's form first when that is the server hippo starts."""
    known = store.records_one(store.folder(cycle.workspace, "formats.json")) or {}
    found = known.get(_formats_key(cycle))
    form = found.get("response_format") if isinstance(found, dict) else None
    if form in ("json_schema", "json_object", "none"):
        return str(form)
    setting = cycle.settings.model.response_format
    lifecycle = _settings(cycle)
    if setting == "auto" and "llama_cpp" in f"{lifecycle.start} {lifecycle.server}":
        return "json_object"
    return setting


def _remember_format(cycle: Host, form: str, why: str) -> None:
    path = store.folder(cycle.workspace, "formats.json")
    known = store.records_one(path) or {}
    known[_formats_key(cycle)] = {
        "response_format": form,
        "refused": why,
        "at": store.iso(store.now()),
    }
    store.write(path, known)
    cycle.emit("model_format", response_format=form, refused=why)


#: The servers this process started, so that stopping one also reaps it.
_STARTED: dict[int, subprocess.Popen[bytes]] = {}


class StartFailed(HippoError):
    """The model's server could not be started, or never became healthy."""


def _settings(cycle: Host) -> SleepLifecycle:
    return cycle.settings.model.lifecycle


def managed(cycle: Host) -> bool:
    return bool(cycle.settings.model.url) and _settings(cycle).managed


def health_url(cycle: Host) -> str:
    """Where readiness is asked: ``health_url``, else the model url without ``/v1``."""
    own = _settings(cycle).health_url
    if own:
        return own
    base = cycle.settings.model.url.rstrip("/")
    return base.removesuffix("/v1") + "/health"


def healthy(cycle: Host, timeout: float = 2.0) -> bool:
    """Whether the server answers its health check (asked directly: the server hippo
    manages runs on this machine, never behind the environment's proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(health_url(cycle), timeout=timeout) as answer:
            return bool(answer.status == 200)
    except (OSError, ValueError):
        return False


def command(cycle: Host) -> list[str]:
    """The start command: the hand-written line, else ``<server> -m <model_path> --host H
    --port P <server_args>`` with host and port from the model's url. A server or model file
    that is not there is an error naming its path."""
    settings = _settings(cycle)
    if settings.start:
        return shlex.split(settings.start)
    for what, path in (("server", settings.server), ("model_path", settings.model_path)):
        found = os.path.expanduser(path)
        if not path or not os.path.exists(found):
            shown = path or "(not set)"
            raise StartFailed(f"[sleep.model.lifecycle] {what}: {shown} does not exist")
    url = urlsplit(cycle.settings.model.url)
    host, port = url.hostname or "127.0.0.1", url.port or (443 if url.scheme == "https" else 80)
    return [
        os.path.expanduser(settings.server),
        "-m",
        os.path.expanduser(settings.model_path),
        "--host",
        host,
        "--port",
        str(port),
        *shlex.split(settings.server_args),
    ]


#: An option whose value is a credential: llama-server's --api-key and -hft/--hf-token,
#: vLLM's --api-key, and any long option named for a key, token, secret or password (not
#: one naming a file that holds it, such as --api-key-file or --ssl-key-file).
_SECRET_OPTION = re.compile(
    r"-hft|--(?:[\w-]*[-_])?(?:api[-_]?key|key|token|secret|password|passwd)", re.IGNORECASE
)
MASKED = "[redacted:secret]"


def shown_command(argv: list[str]) -> list[str]:
    """``argv`` as an event may keep it: the value of every option that holds a credential
    (``--api-key VALUE``, ``--api-key=VALUE``) masked, everything else as it was."""
    shown: list[str] = []
    masking = False
    for arg in argv:
        name, equals, _ = arg.partition("=")
        if masking:  # whatever it looks like: a key may start with "-"
            shown.append(MASKED)
            masking = False
        elif _SECRET_OPTION.fullmatch(name):
            shown.append(f"{name}={MASKED}" if equals else arg)
            masking = not equals
        else:
            shown.append(arg)
    return shown


def _state(cycle: Host) -> dict[str, Any]:
    path = store.folder(cycle.workspace, "model.json")
    if not path.exists():
        return {}
    try:
        return store.read(path, cycle.workspace, "model state")
    except HippoError:
        return {}


def _save(cycle: Host, state: dict[str, Any]) -> None:
    store.write(store.folder(cycle.workspace, "model.json"), state)


def ensure_up(cycle: Host) -> None:
    """Have the server answering before a call: start it if needed and wait for its health
    check. After a failed start, the next try waits ``retry_after_seconds``."""
    state = _state(cycle)
    pid = state.get("pid")
    if pid and not process_alive(int(pid)):
        state.pop("pid", None)
    if healthy(cycle):
        state["last_used"] = store.now()
        state.setdefault("owner", "hippo" if state.get("pid") else "somebody else")
        _save(cycle, state)
        return
    failed = state.get("failed_at")
    wait = cycle.settings.model.retry_after_seconds
    if failed and store.now() - float(failed) < wait:
        raise StartFailed(
            f"the model's server failed to start at {store.iso(float(failed))}; the next try "
            f"waits retry_after_seconds ({wait:g})"
        )
    try:
        _start(cycle, state)
    except StartFailed as exc:
        state["failed_at"] = store.now()
        _save(cycle, state)
        cycle.emit("model_start_failed", error=str(exc))
        raise


def _start(cycle: Host, state: dict[str, Any]) -> None:
    settings = _settings(cycle)
    argv = command(cycle)
    cwd = cycle.workspace.folder
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise StartFailed(
            f"the model's server {argv[0]!r} cannot be run ({exc.strerror})"
        ) from None
    deadline = time.monotonic() + settings.ready_timeout_seconds
    while not healthy(cycle):
        if process.poll() is not None:
            raise StartFailed(
                f"the model's server exited with status {process.returncode} before it was "
                f"ready ({' '.join(shown_command(argv))})"
            )
        if time.monotonic() > deadline:
            _kill(process.pid)
            process.wait(timeout=30)
            raise StartFailed(
                f"the model's server was not healthy at {health_url(cycle)} after "
                f"ready_timeout_seconds ({settings.ready_timeout_seconds:g})"
            )
        time.sleep(settings.poll_seconds)
    _STARTED[process.pid] = process  # it runs on; hippo stops it by its pid, and reaps it here
    state.update(pid=process.pid, owner="hippo", started=store.now(), last_used=store.now())
    state.pop("failed_at", None)
    _save(cycle, state)
    cycle.emit("model_started", pid=process.pid, command=shown_command(argv))


def used(cycle: Host) -> None:
    """Note a call, for ``keep_warm_seconds``."""
    state = _state(cycle)
    if state:
        state["last_used"] = store.now()
        _save(cycle, state)


def stop_now(cycle: Host, reason: str) -> bool:
    """Stop the server hippo started; False (and no event) for one it did not start."""
    state = _state(cycle)
    pid = state.get("pid")
    if not pid or state.get("owner") != "hippo":
        return False
    if process_alive(int(pid)):
        _kill(int(pid))
    _save(cycle, {k: v for k, v in state.items() if k not in ("pid", "owner", "started")})
    cycle.emit("model_stopped", pid=pid, reason=reason)
    return True


def after_tick(cycle: Host, chain_open: bool) -> str | None:
    """At the end of a tick: stop the server when no chain is open, or when it has been
    idle ``keep_warm_seconds``; the reason it was stopped, or None."""
    if not managed(cycle):
        return None
    if not chain_open:
        return "the cycle is over" if stop_now(cycle, "the cycle is over") else None
    state = _state(cycle)
    idle = store.now() - float(state.get("last_used") or 0)
    if state.get("pid") and idle > _settings(cycle).keep_warm_seconds:
        reason = f"idle for keep_warm_seconds ({_settings(cycle).keep_warm_seconds:g})"
        return reason if stop_now(cycle, reason) else None
    return None


def status(cycle: Host) -> dict[str, Any]:
    """What ``/status`` says of the server."""
    state = _state(cycle)
    return {
        "managed": managed(cycle),
        "running": bool(state.get("pid")),
        "owner": state.get("owner"),
        "pid": state.get("pid"),
        "last_used": store.iso(float(state["last_used"])) if state.get("last_used") else None,
        "failed_at": store.iso(float(state["failed_at"])) if state.get("failed_at") else None,
    }


def _kill(pid: int) -> None:
    """Stop the server's whole process group: TERM, then KILL after five seconds."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if process_alive(pid):
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
    started = _STARTED.pop(pid, None)
    if started is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            started.wait(timeout=10)


class Managed:
    """A backend whose server is started on its first call and marked used after each."""

    def __init__(self, backend: ModelBackend, cycle: Host) -> None:
        self.backend, self.cycle, self.up = backend, cycle, False
        self.name = backend.name

    def complete(
        self, prompt: str, *, system: str | None = None, json_schema: dict[str, Any] | None = None
    ) -> Reply:
        if not self.up:
            ensure_up(self.cycle)
            self.up = True
        try:
            return self.backend.complete(prompt, system=system, json_schema=json_schema)
        finally:
            used(self.cycle)
