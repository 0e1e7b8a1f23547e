"""``hippo pack build``: what a registry publishes, made from a pack or a distribution.

A pack folder becomes an archive (``NAME-VERSION.tar.gz``: the same files give the same
bytes, so a rebuild is recognised); a distribution becomes a wheel, built as pip or
``python -m build`` builds it. Either is checked as hippo will check it when a teammate
installs it (every pack a distribution's plugin registers, each ``pack.toml`` version
equal to the distribution's), its SHA-256 computed, and its registry entries made: added
to an index file, or given back to print.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_core.base.errors import HippoError
from hippo_core.files.atomic import atomic_write

if TYPE_CHECKING:
    from hippo_core.packs.dist_check import Checked, Distribution
    from hippo_core.packs.manifest import Manifest
    from hippo_core.plugins.manager import Plugins


@dataclass(frozen=True)
class Entry:
    """One pack's registry entry for the version built."""

    name: str
    summary: str
    license: str
    homepage: str
    version: dict[str, Any]
    """The ``[[pack.versions]]`` table."""


@dataclass
class Built:
    """What was built: the file, its SHA-256, the entries, and what to say of it."""

    file: Path
    sha256: str
    entries: list[Entry]
    distribution: str = ""
    """``<name> <version>`` of a wheel; empty for an archive."""
    packs: list[str] = field(default_factory=list)
    """A line per pack checked (``ok: x 0.1.0 (passes: x)``)."""


def build_archive(root: Path, plugins: Plugins, out: Path) -> Built:
    """The pack at ``root`` checked and written as ``out/NAME-VERSION.tar.gz``."""
    from hippo_core.dream.packs import check_pack
    from hippo_core.packs.archive import sha256_file

    pack = check_pack(root, plugins)
    manifest = pack.manifest
    assert manifest is not None  # check_pack refuses a folder without pack.toml
    stem = f"{manifest.name}-{manifest.version}"
    data = _tar(root, stem)
    target = out / f"{stem}.tar.gz"
    _write_once(target, data)
    passes = sorted(p.name for p in pack.passes)
    entry = _entry(manifest, passes, {"archive": target.name, "sha256": sha256_file(target)})
    return Built(target, sha256_file(target), [entry], packs=[_ok(manifest, passes)])


def _tar(root: Path, top: str) -> bytes:
    """The pack's files under ``top/``, always the same bytes for the same files: sorted,
    no times, owners or modes of this machine (dot-files and ``__pycache__`` left out)."""
    from hippo_core.packs.files import NO_LINKS

    buffer = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.USTAR_FORMAT) as tar,
    ):
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            if path.is_symlink():
                raise HippoError(f"{path}: {NO_LINKS}")
            info = tarfile.TarInfo(f"{top}/{rel.as_posix()}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif path.is_file():
                data = path.read_bytes()
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _write_once(target: Path, data: bytes) -> None:
    """Write ``target``, unless it is there already with other bytes: a version's file
    never changes once it may have been published."""
    if target.exists():
        if target.read_bytes() == data:
            return
        raise HippoError(
            f"{target} exists with other bytes; the files of a version never change once "
            "published: raise the version in pack.toml, or delete the file if it never was"
        )
    atomic_write(target, data)


def build_wheel(folder: Path, dist: Distribution, out: Path) -> Built:
    """The distribution in ``folder`` built as a wheel in ``out``, unpacked, and every pack
    its plugin registers checked there, as a teammate's hippo will check it."""
    import tempfile
    import zipfile

    from hippo_core.packs.archive import sha256_file
    from hippo_core.packs.dist_check import check_distribution, wheel_distribution

    wheel = _pip_wheel(folder, out)
    with tempfile.TemporaryDirectory(prefix="hippo-build-") as temp:
        with zipfile.ZipFile(wheel) as zip_:
            zip_.extractall(temp)
        built = wheel_distribution(Path(temp))
        checked = check_distribution(built)
        problems = _problems(built, checked, wheel)
        if problems:
            raise HippoError("; ".join(problems))
        digest = sha256_file(wheel)
        source = {"distribution": f"{built.name}=={built.version}", "sha256": digest}
        entries, lines = [], []
        for pack in checked:
            manifest = _manifest_at(pack.root)
            entries.append(_entry(manifest, list(pack.passes), source, _license(Path(temp))))
            lines.append(_ok(manifest, list(pack.passes)))
    return Built(wheel, digest, entries, f"{built.name} {built.version}", lines)


def _problems(dist: Distribution, checked: list[Checked], wheel: Path) -> list[str]:
    from hippo_core.packs.dist_check import version_problems

    if not checked:
        return [f"{wheel.name}: its plugin registers no pack"]
    problems = []
    for pack in checked:
        if pack.error is not None:
            rel = _in_wheel(pack.error.path, dist.folder)
            line = f":{pack.error.line}" if pack.error.line else ""
            problems.append(f"{wheel.name}: {rel}{line}: {pack.error.problem}")
    for line in version_problems(dist, checked):
        where, _, rest = line.partition(": ")
        problems.append(f"{wheel.name}: {_in_wheel(Path(where), dist.folder)}: {rest}")
    return problems


def _in_wheel(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return str(path)


def _pip_wheel(folder: Path, out: Path) -> Path:
    """Build the wheel with ``python -m build`` when it is installed, else ``pip wheel``;
    in this environment when it has what the build needs, else in an isolated one."""
    from importlib.util import find_spec

    out.mkdir(parents=True, exist_ok=True)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("*.whl")}
    here = _backend_here(folder)
    if find_spec("build") is not None:
        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(folder)]
        command += ["--no-isolation"] if here else []
    else:
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        command += ["--wheel-dir", str(out), str(folder)]
        command += ["--no-build-isolation"] if here else []
    found = subprocess.run(command, check=False, capture_output=True, text=True)
    if found.returncode != 0:
        lines = [line for line in (found.stderr + found.stdout).splitlines() if line.strip()]
        said = lines[-1].strip() if lines else "no output"
        raise HippoError(f"building the wheel of {folder} failed: {said}")
    made = [p for p in out.glob("*.whl") if before.get(p.name) != p.stat().st_mtime_ns]
    if len(made) != 1:
        raise HippoError(f"building the wheel of {folder} left no single new wheel in {out}")
    return made[0]


def _backend_here(folder: Path) -> bool:
    """Whether this environment has every build requirement ``pyproject.toml`` names."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import InvalidRequirement, Requirement

    try:
        values = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False
    for text in values.get("build-system", {}).get("requires", []):
        try:
            requirement = Requirement(text)
            found = version(requirement.name)
        except (InvalidRequirement, PackageNotFoundError):
            return False
        if not requirement.specifier.contains(found, prereleases=True):
            return False
    return True


def _license(unpacked: Path) -> str:
    """The wheel's licence (``License-Expression``, else ``License``); empty for none."""
    for info in unpacked.glob("*.dist-info/METADATA"):
        fields = {}
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition(": ")
            if sep and key not in fields:
                fields[key] = value.strip()
        return fields.get("License-Expression") or fields.get("License", "")
    return ""


def _manifest_at(root: Path) -> Manifest:
    from hippo_core.dream.packs import read_manifest_required

    return read_manifest_required(root)


def _entry(
    manifest: Manifest, passes: list[str], source: dict[str, str], fallback_license: str = ""
) -> Entry:
    licence = manifest.license or fallback_license
    if not licence:
        raise HippoError(
            f'{manifest.name}: a registry entry needs a licence; add license = "MIT" (or '
            "yours) to pack.toml"
        )
    version: dict[str, Any] = {"version": manifest.version, "hippo": manifest.hippo}
    if manifest.overlays:
        version["overlays"] = manifest.overlays
    else:
        version["passes"] = passes
    version["source"] = source
    return Entry(manifest.name, manifest.description, licence, manifest.homepage, version)


def _ok(manifest: Manifest, passes: list[str]) -> str:
    what = (
        f"a theme over {manifest.overlays}"
        if manifest.overlays
        else f"passes: {', '.join(passes) or 'none'}"
    )
    return f"ok: {manifest.name} {manifest.version} ({what})"


def entries_toml(entries: list[Entry]) -> str:
    """The entries as an index's ``[[pack]]`` tables, to paste into one."""
    import tomlkit

    document = tomlkit.document()
    tables = tomlkit.aot()
    for entry in entries:
        tables.append(_pack_table(entry))
    document.append("pack", tables)
    return tomlkit.dumps(document)


def _pack_table(entry: Entry) -> Any:
    import tomlkit

    table = tomlkit.table()
    table.add("name", entry.name)
    table.add("summary", entry.summary)
    table.add("license", entry.license)
    if entry.homepage:
        table.add("homepage", entry.homepage)
    versions = tomlkit.aot()
    versions.append(_version_table(entry.version))
    table.add("versions", versions)
    return table


def _version_table(version: dict[str, Any]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for key, value in version.items():
        if key == "source":
            source = tomlkit.inline_table()
            source.update(value)
            table.add(key, source)
        else:
            table.add(key, value)
    return table


def add_to_index(index: Path, built: Built) -> list[str]:
    """Add the built version of each pack to the TOML index at ``index`` (made when it is
    not there), an archive named relative to the index's folder. Refuses, writing nothing,
    a version the index lists with another source, or an index that would not check."""
    import tomlkit

    from hippo_core.packs.registry import index_problems

    if index.suffix.lower() == ".json":
        raise HippoError(f"{index}: hippo pack build --index writes TOML indexes (index.toml)")
    raw = index.read_bytes() if index.exists() else b"format = 1\n"
    try:
        document = tomlkit.parse(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise HippoError(f"registry {index}: not valid TOML ({exc})") from None
    packs = document.setdefault("pack", tomlkit.aot())
    lines = []
    for entry in built.entries:
        version = dict(entry.version)
        if "archive" in version["source"]:
            rel = os.path.relpath(built.file, index.resolve().parent)
            version["source"] = {**version["source"], "archive": Path(rel).as_posix()}
        table = next((t for t in packs if t.get("name") == entry.name), None)
        if table is None:
            table = _pack_table(
                Entry(entry.name, entry.summary, entry.license, entry.homepage, version)
            )
            packs.append(table)
            lines.append(f"added {entry.name} {version['version']} to {index} (a new pack)")
            continue
        number = version["version"]
        listed = next((v for v in table["versions"] if v.get("version") == number), None)
        if listed is not None:
            if dict(listed.get("source", {})) != version["source"]:
                raise HippoError(
                    f"registry {index} lists {entry.name} {version['version']} with another "
                    "source already; a published version never changes: raise the version"
                )
            lines.append(f"{entry.name} {version['version']} is in {index} already")
            continue
        table["versions"].append(_version_table(version))
        lines.append(f"added {entry.name} {version['version']} to {index}")
    text = tomlkit.dumps(document)
    _, problems = index_problems(text.encode("utf-8"), str(index), as_json=False)
    if problems:
        raise HippoError(problems[0] + "; the index was not written")
    atomic_write(index, text)
    return lines
