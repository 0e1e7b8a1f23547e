"""Fetching what a registry names, and unpacking pack archives without trusting them.

A location is an https URL, a plain http URL on this machine (``127.0.0.1``, ``localhost``:
local mirrors and tests), or a path. Whatever is fetched is capped at :data:`MAX_BYTES`.
An archive (``.tar.gz``, ``.tgz`` or ``.zip``) is extracted member by member: only regular
files and folders with plain relative names; links, devices, ``..`` and absolute names are
refused before anything is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    import urllib.request

MAX_BYTES = 8 * 1024 * 1024
"""The most bytes hippo fetches for one index or one archive."""
MAX_EXTRACTED_BYTES = 32 * 1024 * 1024
"""The most bytes an archive may unpack to: a pack is a few text files."""
MAX_MEMBERS = 5000
TIMEOUT_SECONDS = 30.0
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
_CHUNK = 65536
# A plain name: printable, no backslash, colon or control character (names that mean
# something else on another system, or that a terminal would render misleadingly).
_PLAIN_PART = re.compile(r"^[^\x00-\x1f\x7f\\:]+$")


class FetchError(HippoError):
    """A location that could not be read: ``reason`` says why, in a few words."""

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = " ".join(reason.split())
        super().__init__(f"{location}: {self.reason}")


class ArchiveError(HippoError):
    """An archive hippo refuses to unpack: ``member`` names the entry, ``problem`` why."""

    def __init__(self, member: str, problem: str) -> None:
        self.member = member
        self.problem = problem
        super().__init__(f"{member!r} {problem}" if member else problem)


def is_url(location: str) -> bool:
    return "://" in location


def url_problem(url: str) -> str | None:
    """Why hippo will not fetch ``url``; None when it will."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOCAL_HOSTS:
        return None
    if parts.scheme == "http":
        return "plain http is refused; use https (http only for 127.0.0.1 or localhost)"
    return f"'{parts.scheme}' URLs are not supported; give an https URL or a path"


def archive_kind(location: str) -> str | None:
    """``tar`` or ``zip`` from the location's name (a URL's path); None for anything else."""
    from urllib.parse import urlsplit

    name = urlsplit(location).path if is_url(location) else location
    name = name.lower()
    if name.endswith((".tar.gz", ".tgz")):
        return "tar"
    if name.endswith(".zip"):
        return "zip"
    return None


def read_bytes(location: str, *, cap: int = MAX_BYTES) -> bytes:
    """The bytes at ``location`` (URL or path), at most ``cap``; raises :class:`FetchError`."""
    import io

    buffer = io.BytesIO()
    _copy(location, buffer, cap)
    return buffer.getvalue()


def download(location: str, dest: Path, *, cap: int = MAX_BYTES) -> str:
    """Copy ``location`` to ``dest`` (at most ``cap`` bytes); returns its SHA-256 in hex."""
    with dest.open("wb") as handle:
        return _copy(location, handle, cap)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _copy(location: str, out: IO[bytes], cap: int) -> str:
    digest = hashlib.sha256()
    with _open(location, cap) as source:
        total = 0
        while chunk := source.read(_CHUNK):
            total += len(chunk)
            if total > cap:
                raise FetchError(location, f"larger than {cap // (1024 * 1024)} MiB")
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _open(location: str, cap: int) -> Any:
    if not is_url(location):
        try:
            return open(location, "rb")
        except OSError as exc:
            raise FetchError(location, exc.strerror or str(exc)) from None
    problem = url_problem(location)
    if problem:
        raise FetchError(location, problem)
    import urllib.error
    import urllib.request

    request = urllib.request.Request(location, headers={"User-Agent": _user_agent()})
    try:
        response = _opener().open(request, timeout=TIMEOUT_SECONDS)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise FetchError(location, f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(location, _reason(exc.reason)) from None
    except TimeoutError:
        raise FetchError(location, f"no answer within {TIMEOUT_SECONDS:g} s") from None
    except (OSError, ValueError) as exc:
        raise FetchError(location, str(exc)) from None
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > cap:
        response.close()
        raise FetchError(location, f"larger than {cap // (1024 * 1024)} MiB")
    return _Guarded(response, location)


class _Guarded:
    """A response whose read errors (a timeout, a reset) become :class:`FetchError`."""

    def __init__(self, response: Any, location: str) -> None:
        self.response = response
        self.location = location

    def read(self, size: int) -> bytes:
        try:
            return bytes(self.response.read(size))
        except (TimeoutError, OSError) as exc:
            raise FetchError(self.location, _reason(exc)) from None

    def __enter__(self) -> _Guarded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.response.close()


def _reason(reason: object) -> str:
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return f"no answer within {TIMEOUT_SECONDS:g} s"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason)


def _user_agent() -> str:
    from hippo_core.version import __version__

    return f"hippo/{__version__}"


def _opener() -> urllib.request.OpenerDirector:
    import urllib.request

    class CheckedRedirects(urllib.request.HTTPRedirectHandler):
        # A redirect must obey the same rule as the URL: no https -> plain http downgrade.
        def redirect_request(
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            problem = url_problem(newurl)
            if problem:
                raise FetchError(req.full_url, f"redirected to {newurl}: {problem}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(CheckedRedirects)


# Extracting


@dataclass(frozen=True)
class _Member:
    name: str
    """The member's plain relative path (``./`` and trailing ``/`` removed)."""
    is_dir: bool
    size: int


def extract(archive: Path, kind: str, into: Path) -> None:
    """Unpack ``archive`` (``tar`` or ``zip``) into the new folder ``into``.

    Every member is checked before the first is written; raises :class:`ArchiveError`
    naming the first member refused.
    """
    if kind == "tar":
        _extract_tar(archive, into)
    elif kind == "zip":
        _extract_zip(archive, into)
    else:
        raise ArchiveError("", f"not an archive hippo unpacks ({', '.join(ARCHIVE_SUFFIXES)})")


def plain_name(name: str) -> str:
    """``name`` as a relative path inside the archive; ValueError saying why it is refused."""
    if not name or "\x00" in name:
        raise ValueError("has an empty name")
    if "\\" in name:
        raise ValueError("has a backslash in its name")
    if name.startswith("/"):
        raise ValueError("is an absolute path")
    parts = [part for part in PurePosixPath(name).parts if part != "."]
    if ".." in parts:
        raise ValueError("has '..' in its path, which leaves the pack folder")
    if not parts:
        raise ValueError("has an empty name")
    for part in parts:
        if not _PLAIN_PART.match(part) or part != part.strip():
            raise ValueError("has a name that is not plain (control characters, ':' or spaces)")
    return "/".join(parts)


def _check_all(members: list[_Member]) -> None:
    if len(members) > MAX_MEMBERS:
        raise ArchiveError("", f"holds {len(members)} entries; a pack may have {MAX_MEMBERS}")
    total = sum(member.size for member in members)
    if total > MAX_EXTRACTED_BYTES:
        mib = MAX_EXTRACTED_BYTES // (1024 * 1024)
        raise ArchiveError("", f"unpacks to {total} bytes; a pack may have {mib} MiB")
    seen: dict[str, bool] = {}
    for member in members:
        if member.name in seen and not (member.is_dir and seen[member.name]):
            raise ArchiveError(member.name, "is in the archive twice")
        seen[member.name] = member.is_dir
        parent = member.name.rpartition("/")[0]
        while parent:
            if seen.get(parent) is False:
                raise ArchiveError(member.name, f"is inside {parent!r}, which is a file")
            parent = parent.rpartition("/")[0]


def _extract_tar(archive: Path, into: Path) -> None:
    import tarfile

    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            infos = tar.getmembers()
            members = [_tar_member(info) for info in infos]
            _unpack(into, members, [partial(tar.extractfile, info) for info in infos])
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError("", f"is not a readable tar.gz archive ({exc})") from None


def _unpack(
    into: Path, members: list[_Member], openers: list[Callable[[], IO[bytes] | None]]
) -> None:
    """Check every member, then write them into the new folder ``into``, in order."""
    _check_all(members)
    into.mkdir()
    for member, opener in zip(members, openers, strict=True):
        if member.is_dir:
            (into / member.name).mkdir(parents=True, exist_ok=True)
            continue
        source = opener()
        if source is None:  # pragma: no cover - regular members always have data
            raise ArchiveError(member.name, "cannot be read")
        with source:
            _write(into, member, source)


def _tar_member(info: Any) -> _Member:
    try:
        name = plain_name(info.name)
    except ValueError as exc:
        raise ArchiveError(info.name, str(exc)) from None
    if info.issym():
        raise ArchiveError(info.name, "is a symbolic link; packs may not hold links")
    if info.islnk():
        raise ArchiveError(info.name, "is a hard link; packs may not hold links")
    if info.isdev() or info.isfifo():
        raise ArchiveError(info.name, "is a device or a FIFO; packs hold only files and folders")
    if not (info.isreg() or info.isdir()):
        raise ArchiveError(info.name, "is not a regular file or a folder")
    return _Member(name, info.isdir(), 0 if info.isdir() else info.size)


def _extract_zip(archive: Path, into: Path) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(archive) as zip_:
            infos = zip_.infolist()
            members = [_zip_member(info) for info in infos]
            _unpack(into, members, [partial(zip_.open, info) for info in infos])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise ArchiveError("", f"is not a readable zip archive ({exc})") from None


def _zip_member(info: Any) -> _Member:
    raw = info.filename
    try:
        name = plain_name(raw)
    except ValueError as exc:
        raise ArchiveError(raw, str(exc)) from None
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise ArchiveError(raw, "is a symbolic link; packs may not hold links")
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveError(raw, "is a device or a FIFO; packs hold only files and folders")
    if info.flag_bits & 0x1:
        raise ArchiveError(raw, "is encrypted")
    is_dir = bool(info.is_dir())
    return _Member(name, is_dir, 0 if is_dir else info.file_size)


def _write(into: Path, member: _Member, source: IO[bytes]) -> None:
    path = into / member.name
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_EXCL: a name cannot be written twice, and nothing existing is followed.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as out:
        written = 0
        while chunk := source.read(_CHUNK):
            written += len(chunk)
            if written > member.size:
                raise ArchiveError(member.name, "holds more bytes than its header says")
            out.write(chunk)


def remove_tree(path: Path) -> None:
    """Delete a folder hippo made (staging, a replaced pack); quietly when it is gone."""
    shutil.rmtree(path, ignore_errors=True)
