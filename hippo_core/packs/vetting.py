"""Vetting a pack before it is installed: a release's archive fetched, its SHA-256
verified, unpacked and checked as the loader checks a pack, its pass names unique here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hippo_core.base.errors import HippoError
from hippo_core.packs.archive import ArchiveError, FetchError, archive_kind
from hippo_core.packs.files import PackError
from hippo_core.packs.lock import Locked
from hippo_core.packs.manifest import read_manifest

if TYPE_CHECKING:
    from hippo_core.dream.packs import Pack
    from hippo_core.packs.index import Release
    from hippo_core.plugins.manager import Plugins
    from hippo_core.workspace.folder import Workspace


def fetch_and_check(
    workspace: Workspace, plugins: Plugins, release: Release, staging: Path
) -> tuple[Path, Locked]:
    """Fetch, verify, unpack and check ``release`` in ``staging``: its root and lock entry."""
    from hippo_core.packs.archive import download, extract

    location = release.registry.resolve(release.archive)
    kind = archive_kind(location)
    if kind is None:  # the index check refuses these; a location resolved oddly is not trusted
        raise HippoError(f"{release.label}: {location} is not a .tar.gz, .tgz or .zip archive")
    archive = staging / "archive"
    digest = _cached(release.sha256, archive) if _is_url(location) else ""
    if not digest:
        try:
            digest = download(location, archive)
        except FetchError as error:
            raise HippoError(
                f"{release.label}: the archive {location} cannot be fetched ({error.reason}); "
                "nothing was installed"
            ) from None
        if digest == release.sha256 and _is_url(location):
            _keep(archive, digest)
    if digest != release.sha256:
        raise HippoError(
            f"{release.label}: the archive's sha256 is {digest}, the registry says "
            f"{release.sha256}; nothing was installed"
        )
    try:
        extract(archive, kind, staging / "files")
    except ArchiveError as error:
        raise HippoError(f"{release.label}: the archive {error}; nothing was installed") from None
    root = _pack_root(staging / "files", release)
    pack = check_installable(root, plugins, release.name, release.version)
    refuse_twin_passes(workspace, plugins, pack, release.label)
    entry = Locked(
        name=release.name,
        version=release.version,
        origin="registry",
        source=location if _is_url(location) else _shown_path(workspace, release, location),
        registry=release.registry.label,
        archive=location if _is_url(location) else _shown_path(workspace, release, location),
        sha256=digest,
    ).with_files(root)
    return root, entry


def _pack_root(files: Path, release: Release) -> Path:
    if (files / "pack.toml").is_file():
        return files
    entries = [entry for entry in files.iterdir() if not entry.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / "pack.toml").is_file():
        return entries[0]
    raise HippoError(
        f"{release.label}: the archive holds no pack (no pack.toml at its top level or in "
        "its single top folder); nothing was installed"
    )


def check_installable(
    root: Path, plugins: Plugins, name: str, version: str, *, then: str = "nothing was installed"
) -> Pack:
    """The loader's checks on the pack at ``root``, which must be ``name`` ``version``."""
    from packaging.version import Version

    from hippo_core.dream.packs import check_pack

    label = f"{name} {version}"
    try:
        manifest = read_manifest(root)
        if manifest is not None and (
            manifest.name != name or Version(manifest.version) != Version(version)
        ):
            raise HippoError(
                f"{label}: its pack.toml says {manifest.name} {manifest.version}, not what "
                f"the registry lists" + (f"; {then}" if then else "")
            )
        return check_pack(root, plugins)
    except PackError as error:
        shown = _inside(error.path, root)
        where = f"{shown}:{error.line}" if error.line else shown
        raise HippoError(
            f"{label} is not a pack hippo can run: {where}: {error.problem}"
            + (f"; {then}" if then else "")
        ) from None


def _inside(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
    return "pack folder" if rel == "." else rel


def refuse_twin_passes(workspace: Workspace, plugins: Plugins, pack: Pack, label: str) -> None:
    refuse_twin_names(workspace, plugins, pack.name, {p.name for p in pack.passes}, label)


def refuse_twin_names(
    workspace: Workspace, plugins: Plugins, pack: str, passes: set[str], label: str
) -> None:
    """Refuse the pack ``pack`` with these pass names when another pack here has one.

    ``--pass`` chooses by file name, so a pass name may be used once over all the packs
    here; a pack that came in with a taken name would be left out of every dream.
    """
    for other, root in _pack_roots(workspace, plugins):
        if other == pack or other in workspace.settings.disabled_packs:
            continue
        for name in sorted(passes):
            if (root / "passes" / f"{name}.toml").is_file():
                raise HippoError(
                    f"{label} has a pass named '{name}', and so does pack '{other}' "
                    f"here; pass names must be unique; nothing was installed"
                )


def _pack_roots(workspace: Workspace, plugins: Plugins) -> Iterator[tuple[str, Path]]:
    folder = workspace.packs_dir
    names = set()
    if folder.is_dir() and not folder.is_symlink():
        for entry in sorted(folder.iterdir()):
            if not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink():
                names.add(entry.name)
                yield entry.name, entry
    for name, source in plugins.packs().items():
        if not source.plugin.first_party and name not in names:
            yield name, source.directory


def _is_url(location: str) -> bool:
    return "://" in location


def _shown_path(workspace: Workspace, release: Release, location: str) -> str:
    """An archive at a path, as the lock records it for every teammate: relative to the
    workspace when inside it, else relative to the registry's folder (which ``registry``
    names), never a path only this machine has."""
    import os

    path = Path(location).resolve()
    shown = workspace.relative(path)
    if not os.path.isabs(shown):
        return shown
    return Path(os.path.relpath(path, Path(release.registry.location).parent)).as_posix()


def archive_cache() -> Path:
    """``$HIPPO_HOME/archives/``: archives fetched from URLs, named by their SHA-256."""
    from hippo_core.files.home import hippo_home

    return hippo_home() / "archives"


def _cached(sha256: str, into: Path) -> str:
    """Copy the archive with digest ``sha256`` from the cache to ``into`` when it is there
    and still has that digest; its digest then, else ""."""
    import re
    import shutil

    from hippo_core.packs.archive import sha256_file

    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        return ""
    kept = archive_cache() / sha256
    try:
        shutil.copyfile(kept, into)
    except OSError:
        return ""
    if sha256_file(into) != sha256:  # damaged on disk: fetch it again
        into.unlink()
        return ""
    return sha256


def _keep(archive: Path, digest: str) -> None:
    """Keep a verified archive for the next ``pack add`` (best effort: a cache)."""
    import contextlib

    from hippo_core.files.home import hippo_home
    from hippo_core.files.owner_only import owner_only_write

    with contextlib.suppress(OSError):
        data = archive.read_bytes()
        owner_only_write(archive_cache() / digest, data, top=hippo_home(), durable=False)
