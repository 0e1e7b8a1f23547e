"""Packs that carry code: their distribution fetched as a wheel, its SHA-256 checked, its
pack read from the wheel before anything is installed, installed with pip into the
environment hippo runs in, and checked by a fresh hippo process.

pip runs as ``python -m pip`` with the Python hippo runs on, so a hippo installed with
pipx gets the wheel in its own environment (as ``pipx inject`` would). The wheel is
downloaded first (``pip download --no-deps``) into a folder inside ``.hippo/``: its digest
is what a registry entry and the lock file pin, and a wheel whose digest is not the one
pinned is never installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError

if TYPE_CHECKING:
    from hippo_core.packs.manifest import Manifest


@dataclass(frozen=True)
class Wheel:
    """A distribution's wheel, downloaded and hashed, and the pack it holds."""

    path: Path
    distribution: str
    version: str
    """The distribution's version, from the wheel's name."""
    sha256: str
    pack: Path | None
    """The pack's folder, unpacked from the wheel (None when the wheel holds no such pack)."""
    manifest: Manifest | None


@dataclass(frozen=True)
class Installed:
    """What a fresh hippo process found after pip installed a distribution."""

    directory: Path
    distribution: str
    dist_version: str
    version: str
    """The pack's version, from its ``pack.toml``."""


def pip_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", *args]


def run_pip(args: list[str], *, then: str = "nothing was recorded") -> None:
    """Run pip quietly with this Python; its errors shown, one line of ours when it fails."""
    command = pip_command("--quiet", "--disable-pip-version-check", *args)
    try:
        found = subprocess.run(command, check=False, capture_output=True, text=True)
    except OSError as exc:
        raise HippoError(f"cannot run pip ({exc.strerror}): {' '.join(command)}") from None
    if found.returncode != 0:
        said = _last_error(found.stderr + found.stdout)
        if "No module named pip" in said:
            raise HippoError(
                f"pip is not there for hippo's Python ({sys.executable}); install pip in "
                "that environment (under pipx: pipx reinstall hippo-memory)"
            )
        raise HippoError(f"pip {' '.join(args)} failed: {said}; {then}")


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    chosen = errors[-1] if errors else (lines[-1] if lines else "no output")
    return chosen.removeprefix("ERROR: ")


def download(requirement: str, folder: Path, pack: str) -> Wheel:
    """Download the wheel ``requirement`` names (no dependencies) into the new ``folder``
    and read the pack ``pack`` from it; raises :class:`HippoError` when pip cannot."""
    from hippo_core.packs.archive import sha256_file

    folder.mkdir()
    run_pip(
        ["download", "--no-deps", "--only-binary", ":all:", "--dest", str(folder), requirement],
        then="nothing was installed",
    )
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise HippoError(f"pip download {requirement} gave no single wheel; nothing was installed")
    wheel = wheels[0]
    dist, version = _name_and_version(wheel.name)
    root, manifest = _pack_in(wheel, pack, folder / "pack")
    return Wheel(wheel, dist, version, sha256_file(wheel), root, manifest)


def _name_and_version(filename: str) -> tuple[str, str]:
    """``hippo_pack_x-0.2.0-py3-none-any.whl`` -> ``("hippo-pack-x", "0.2.0")``."""
    parts = filename.split("-")
    return parts[0].replace("_", "-"), parts[1] if len(parts) > 1 else ""


def _pack_in(wheel: Path, name: str, into: Path) -> tuple[Path | None, Manifest | None]:
    """Unpack the folder of the pack ``name`` (the one whose ``pack.toml`` names it) from
    ``wheel`` into ``into``, with the archive rules; ``(None, None)`` when there is none."""
    import tomllib
    import zipfile

    from hippo_core.packs.archive import ArchiveError, plain_name
    from hippo_core.packs.files import PackError
    from hippo_core.packs.manifest import read_manifest

    try:
        with zipfile.ZipFile(wheel) as zip_:
            names = [info.filename for info in zip_.infolist()]
            top = ""
            for member in sorted(names, key=len):
                if not member.endswith("/pack.toml") and member != "pack.toml":
                    continue
                try:
                    values = tomllib.loads(zip_.read(member).decode("utf-8"))
                except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                    continue
                if values.get("name") == name:
                    top = member.removesuffix("pack.toml")
                    break
            if not top:
                return None, None
            for member in names:
                if not member.startswith(top) or member.endswith("/"):
                    continue
                rel = plain_name(member[len(top) :])
                target = into / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zip_.read(member))
    except (zipfile.BadZipFile, OSError, ValueError, ArchiveError) as exc:
        raise HippoError(f"{wheel.name} is not a wheel hippo can read ({exc})") from None
    try:
        return into, read_manifest(into)
    except PackError as error:
        raise HippoError(f"{wheel.name}: {error.problem} ({error.path.name})") from None


def install(wheel: Path) -> None:
    """pip install the downloaded wheel (its dependencies from the package index)."""
    run_pip(["install", str(wheel)], then="nothing was recorded")


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``; empty when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return ""


def probe(name: str) -> Installed:
    """Ask a fresh hippo process (the plugins as installed now) for the pack ``name`` a
    distribution registers, checked as the loader checks it."""
    code = "import sys; from hippo_core.packs.wheels import _probe; _probe(sys.argv[1])"
    found = subprocess.run(
        [sys.executable, "-c", code, name], check=False, capture_output=True, text=True
    )
    try:
        answer = json.loads(found.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = _last_error(found.stderr) if found.stderr else "no answer"
        raise HippoError(f"checking the pack '{name}' failed: {said}") from None
    if answer.get("error"):
        raise HippoError(str(answer["error"]))
    return Installed(
        Path(answer["directory"]),
        answer["distribution"],
        answer["dist_version"],
        answer["version"],
    )


def _probe(name: str) -> None:
    """The fresh process of :func:`probe`: one JSON line on stdout."""
    import os

    from hippo_core.packs.manifest import read_manifest
    from hippo_core.packs.vetting import check_installable
    from hippo_core.plugins.manager import load_plugins

    answer: dict[str, str] = {}
    try:
        source = load_plugins().packs().get(name)
        if source is None or source.plugin.first_party:
            chosen = os.environ.get("HIPPO_LOAD_PLUGINS")
            hint = f" (HIPPO_LOAD_PLUGINS={chosen!r} chooses which plugins load)" if chosen else ""
            raise HippoError(f"no plugin installed registers a pack named '{name}'{hint}")
        manifest = read_manifest(source.directory)
        version = manifest.version if manifest else source.plugin.version
        check_installable(source.directory, load_plugins(), name, version, then="")
        answer = {
            "directory": str(source.directory),
            "distribution": source.plugin.distribution,
            "dist_version": source.plugin.version,
            "version": version,
        }
    except HippoError as error:
        answer = {"error": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")


def uninstall(distribution: str) -> None:
    run_pip(["uninstall", "--yes", distribution], then="it is still installed")
