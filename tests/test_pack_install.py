"""``hippo pack add``, ``update`` and ``remove``: real archives served by a real HTTP server
on 127.0.0.1 (or read from a path), the real CLI, and the lock file they leave."""

from __future__ import annotations

import hashlib
import os
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hippo_core.packs.running import load_packs, load_passes
from hippo_core.plugins.manager import load_plugins
from hippo_core.workspace.folder import Workspace

from .conftest import HippoRunner, Run, WorkspaceMaker
from .test_registry import (
    CORE,
    Server,
    make_pack,
    make_theme,
    member,
    pack_entry,
    serving,
    settings_for,
    tar_pack,
    tar_with,
    version,
    write_index,
    zip_pack,
)
from .venvs import make_venv, offline_env

NAME = "notes-check"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    with serving(tmp_path / "served", monkeypatch) as running:
        yield running


@pytest.fixture
def root(make_workspace: WorkspaceMaker, hippo: HippoRunner, server: Server) -> Path:
    """An initialised workspace whose settings name the test server's index."""
    folder = make_workspace(settings_for(server.url + "index.toml"))
    assert hippo("init", cwd=folder).code == 0
    return folder


def publish(server: Server, tmp_path: Path, *versions: dict[str, object]) -> None:
    """Write the server's index listing ``NAME`` with these versions (archives beside it)."""
    write_index(server.root / "index.toml", [pack_entry(NAME, list(versions), tags=["checks"])])


def archive(server: Server, tmp_path: Path, number: str, *, text: str = "") -> tuple[str, str]:
    """A .tar.gz of ``NAME`` ``number`` on the server: its file name and sha256."""
    pack = make_pack(tmp_path / "src" / f"{number}{text and '-x'}" / NAME, NAME, number, text=text)
    file = f"{NAME}-{number}.tar.gz"
    return file, tar_pack(pack, server.root / file)


def released(server: Server, tmp_path: Path, number: str, **more: object) -> dict[str, object]:
    file, sha = archive(server, tmp_path, number)
    return version(number, archive=file, sha=sha, **more)  # type: ignore[arg-type]


def lock(root: Path) -> dict[str, dict[str, object]]:
    values = tomllib.loads((root / ".hippo" / "packs.lock").read_text(encoding="utf-8"))
    return values["packs"]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under .hippo/ except the caches: what a failed command must leave alone."""
    hippo_dir = root / ".hippo"
    return {
        path.relative_to(hippo_dir).as_posix(): path.read_bytes()
        for path in sorted(hippo_dir.rglob("*"))
        if path.is_file() and "cache" not in path.relative_to(hippo_dir).parts
    }


def refused(run: Run) -> str:
    """The one error line of a refused command (and nothing on stdout)."""
    assert run.code != 0, run.out
    lines = run.err.splitlines()
    assert lines and lines[-1].startswith("error: "), run.err
    assert "Traceback" not in run.err
    return lines[-1].removeprefix("error: ")


# add from an archive


def test_add_installs_the_newest_version_from_an_archive_url(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(
        server,
        tmp_path,
        released(server, tmp_path, "0.1.0"),
        released(server, tmp_path, "0.2.0"),
    )
    result = hippo("pack", "add", NAME, cwd=root)
    assert result.code == 0, result.err
    url = server.url + "index.toml"
    assert result.out.splitlines() == [
        f"added {NAME} 0.2.0 from {url}",
        f"  runs from .hippo/packs/{NAME}/",
    ]
    installed = root / ".hippo" / "packs" / NAME
    assert (installed / "pack.toml").read_text(encoding="utf-8").startswith(f'name = "{NAME}"')
    assert sorted(p.name for p in (installed / "passes").iterdir()) == [
        f"{NAME}-consolidate.toml",
        f"{NAME}-verify.toml",
    ]
    entry = lock(root)[NAME]
    archive_url = f"{server.url}{NAME}-0.2.0.tar.gz"
    digest = hashlib.sha256((server.root / f"{NAME}-0.2.0.tar.gz").read_bytes()).hexdigest()
    files = entry.pop("files")
    assert entry == {
        "version": "0.2.0",
        "origin": "registry",
        "source": archive_url,
        "registry": url,
        "archive": archive_url,
        "sha256": digest,
    }
    assert (
        isinstance(files, dict)
        and files["pack.toml"] == hashlib.sha256((installed / "pack.toml").read_bytes()).hexdigest()
    )
    assert sorted(files) == sorted(
        p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()
    )
    assert [p.name for p in (root / ".hippo").iterdir() if p.name.startswith(".pack-")] == []
    # The pack runs: the loader finds its passes next to core's.
    passes = load_passes(Workspace.open(root), load_plugins())
    assert [p.key for p in passes] == [
        "core/consolidate",
        "core/verify",
        f"{NAME}/{NAME}-consolidate",
        f"{NAME}/{NAME}-verify",
    ]


def test_the_lock_file_records_each_pack_for_git(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    text = (root / ".hippo" / "packs.lock").read_text(encoding="utf-8")
    assert text.startswith("# The packs installed in this workspace, written by hippo")
    assert "Commit it with .hippo/packs/" in text
    assert text.index("[packs.core]") < text.index(f"[packs.{NAME}]")
    assert f'[packs.{NAME}.files]\n"pack.toml" = "' in text
    assert f'registry = "{server.url}index.toml"' in text
    assert sorted(lock(root)) == ["core", NAME]
    assert ".hippo/packs" not in (root / ".gitignore").read_text(encoding="utf-8")


def test_add_from_a_path_registry_with_a_zip_beside_it(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
):
    registry = tmp_path / "team-registry"
    pack = make_pack(tmp_path / "src" / NAME, NAME, "1.0")
    (registry / "dist").mkdir(parents=True)
    sha = zip_pack(pack, registry / "dist" / f"{NAME}-1.0.zip")
    write_index(
        registry / "index.toml",
        [pack_entry(NAME, [version("1.0", archive=f"dist/{NAME}-1.0.zip", sha=sha)])],
    )
    root = make_workspace(settings_for(str(registry / "index.toml")))
    assert hippo("init", cwd=root).code == 0
    result = hippo("pack", "add", NAME, cwd=root)
    assert result.code == 0, result.err
    entry = lock(root)[NAME]
    # Relative to the registry the lock names, so it means the same on a teammate's machine.
    assert entry["archive"] == entry["source"] == f"dist/{NAME}-1.0.zip"
    assert entry["registry"] == str(registry / "index.toml")  # as the settings name it
    assert entry["sha256"] == sha
    assert (root / ".hippo" / "packs" / NAME / "passes" / f"{NAME}-verify.toml").is_file()


def test_add_from_a_registry_named_on_the_command_line(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
):
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    registry = root / "vendor-registry"
    pack = make_pack(tmp_path / "src" / NAME, NAME, "1.0")
    registry.mkdir()
    sha = tar_pack(pack, registry / f"{NAME}.tgz", top=None)
    write_index(
        registry / "index.json",
        [pack_entry(NAME, [version("1.0", archive=f"{NAME}.tgz", sha=sha)])],
    )
    not_there = hippo("pack", "add", NAME, cwd=root)
    assert refused(not_there) == (
        f"no pack named '{NAME}' in the registries (hippo); hippo pack search lists what they have"
    )
    result = hippo("pack", "add", NAME, "--registry", "vendor-registry/index.json", cwd=root)
    assert result.code == 0, result.err
    assert lock(root)[NAME]["registry"] == "vendor-registry/index.json"
    assert lock(root)[NAME]["archive"] == f"vendor-registry/{NAME}.tgz"


def test_add_works_offline_once_the_archive_was_fetched(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path, make_workspace: WorkspaceMaker
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    digest = lock(root)[NAME]["sha256"]
    kept = Path(os.environ["HIPPO_HOME"]) / "archives" / digest
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == digest
    server.stop()  # no network from here on
    other = make_workspace(settings_for(server.url + "index.toml"))
    assert hippo("init", cwd=other).code == 0
    offline = hippo("pack", "add", NAME, cwd=other)
    assert offline.code == 0, offline.err
    assert lock(other)[NAME]["sha256"] == digest
    kept.write_bytes(b"damaged")  # a cache that no longer matches is never used
    third = make_workspace(settings_for(server.url + "index.toml"))
    assert hippo("init", cwd=third).code == 0
    assert "cannot be fetched" in refused(hippo("pack", "add", NAME, cwd=third))
    assert not (third / ".hippo" / "packs" / NAME).exists()


def test_add_a_named_version(root: Path, hippo: HippoRunner, server: Server, tmp_path: Path):
    publish(
        server, tmp_path, released(server, tmp_path, "0.1.0"), released(server, tmp_path, "0.2.0")
    )
    missing = hippo("pack", "add", f"{NAME}==0.3", cwd=root)
    assert refused(missing) == (
        f"{NAME} has no version 0.3 in registry {server.url}index.toml; it has: 0.2.0, 0.1.0"
    )
    result = hippo("pack", "add", f"{NAME}==0.1.0", cwd=root)
    assert result.code == 0, result.err
    assert lock(root)[NAME]["version"] == "0.1.0"
    bad = hippo("pack", "add", f"{NAME}==latest", cwd=root)
    assert bad.code == 2
    assert refused(bad) == f"'latest' is not a version like 0.1.0 (in '{NAME}==latest')"


def test_a_yanked_version_is_installed_only_when_named(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(
        server,
        tmp_path,
        released(server, tmp_path, "0.1.0"),
        released(server, tmp_path, "0.2.0", yanked="drops every note"),
    )
    result = hippo("pack", "add", NAME, cwd=root)
    assert result.code == 0 and lock(root)[NAME]["version"] == "0.1.0"
    assert hippo("pack", "remove", NAME, cwd=root).code == 0
    named = hippo("pack", "add", f"{NAME}==0.2.0", cwd=root)
    assert named.code == 0, named.err
    assert f"warning: {NAME} 0.2.0 was yanked: drops every note" in named.err
    assert lock(root)[NAME]["version"] == "0.2.0"


def test_every_version_yanked(root: Path, hippo: HippoRunner, server: Server, tmp_path: Path):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0", yanked="broken"))
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"every version of {NAME} was yanked; name one to install it anyway "
        f"(hippo pack add {NAME}==0.1.0)"
    )


def test_a_version_for_another_hippo_is_refused(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "2.0", hippo=">=99"))
    before = snapshot(root)
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"no version of {NAME} works with hippo 0.1.0: the newest, 2.0, needs hippo >=99; "
        "upgrade hippo (git pull and pip install -e . in hippo's checkout)"
    )
    assert refused(hippo("pack", "add", f"{NAME}==2.0", cwd=root)) == (
        f"{NAME} 2.0 needs hippo >=99; this is hippo 0.1.0; upgrade hippo "
        "(git pull and pip install -e . in hippo's checkout) or choose another version"
    )
    assert snapshot(root) == before


def test_a_sha256_mismatch_installs_nothing(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    file, actual = archive(server, tmp_path, "0.2.0")
    expected = "0" * 64
    publish(server, tmp_path, version("0.2.0", archive=file, sha=expected))
    before = snapshot(root)
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.2.0: the archive's sha256 is {actual}, the registry says {expected}; "
        "nothing was installed"
    )
    assert snapshot(root) == before
    assert sorted(p.name for p in (root / ".hippo" / "packs").iterdir()) == ["core"]
    assert not [p for p in (root / ".hippo").iterdir() if p.name.startswith(".pack-")]


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (member("../x"), "'../x' has '..' in its path, which leaves the pack folder"),
        (member("passes/../../x"), "'passes/../../x' has '..' in its path, which leaves"),
        (member("/abs/x"), "'/abs/x' is an absolute path"),
        (
            member("prompts/link.md", tarfile.SYMTYPE, "/etc/passwd"),
            "'prompts/link.md' is a symbolic link; packs may not hold links",
        ),
        (
            member("prompts/hard.md", tarfile.LNKTYPE, "pack.toml"),
            "'prompts/hard.md' is a hard link; packs may not hold links",
        ),
        (member("fifo", tarfile.FIFOTYPE), "'fifo' is a device or a FIFO"),
        (member("dev", tarfile.CHRTYPE), "'dev' is a device or a FIFO"),
        (member("prompts/a\\b.md"), "'prompts/a\\\\b.md' has a backslash in its name"),
        (member("prompts/\x1b[31m.md"), "has a name that is not plain"),
        (member("pack.toml"), "'pack.toml' is in the archive twice"),
    ],
)
def test_an_archive_member_that_is_not_plain_is_refused(
    root: Path,
    hippo: HippoRunner,
    server: Server,
    tmp_path: Path,
    bad: tarfile.TarInfo,
    problem: str,
):
    pack = make_pack(tmp_path / "src" / NAME, NAME, "0.1.0")
    sha = tar_with(server.root / "bad.tar.gz", [bad], pack)
    publish(server, tmp_path, version("0.1.0", archive="bad.tar.gz", sha=sha))
    before = snapshot(root)
    error = refused(hippo("pack", "add", NAME, cwd=root))
    assert error.startswith(f"{NAME} 0.1.0: the archive ")
    assert problem in error and error.endswith("; nothing was installed")
    assert snapshot(root) == before
    assert not (tmp_path / "x").exists() and not (root / ".hippo" / "x").exists()
    assert not [p for p in (root / ".hippo").iterdir() if p.name.startswith(".pack-")]


def test_a_symbolic_link_in_a_zip_is_refused(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    pack = make_pack(tmp_path / "src" / NAME, NAME, "0.1.0")
    file = server.root / "bad.zip"
    zip_pack(pack, file)
    with zipfile.ZipFile(file, "a") as zip_:
        link = zipfile.ZipInfo("prompts/link.md")
        link.external_attr = (0o120777 << 16) | 0
        zip_.writestr(link, "/etc/passwd")
    sha = hashlib.sha256(file.read_bytes()).hexdigest()
    publish(server, tmp_path, version("0.1.0", archive="bad.zip", sha=sha))
    before = snapshot(root)
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0: the archive 'prompts/link.md' is a symbolic link; packs may not hold "
        "links; nothing was installed"
    )
    assert snapshot(root) == before


def test_the_archive_must_hold_the_pack_the_registry_names(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    other = make_pack(tmp_path / "src" / "other", "other", "0.1.0")
    sha = tar_pack(other, server.root / "other.tar.gz")
    publish(server, tmp_path, version("0.1.0", archive="other.tar.gz", sha=sha))
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0: its pack.toml says other 0.1.0, not what the registry lists; "
        "nothing was installed"
    )
    loose = tmp_path / "loose"
    (loose / "a").mkdir(parents=True)
    (loose / "b").mkdir()
    sha = tar_pack(loose, server.root / "loose.tar.gz", top=None)
    publish(server, tmp_path, version("0.1.0", archive="loose.tar.gz", sha=sha))
    assert hippo("pack", "update", cwd=root).code == 0  # add reads the cached index
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0: the archive holds no pack (no pack.toml at its top level or in its "
        "single top folder); nothing was installed"
    )


def test_a_pack_the_loader_refuses_is_not_installed(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    pack = make_pack(tmp_path / "src" / NAME, NAME, "0.1.0")
    (pack / "prompts" / "verify.md").unlink()
    sha = tar_pack(pack, server.root / "broken.tar.gz")
    publish(server, tmp_path, version("0.1.0", archive="broken.tar.gz", sha=sha))
    before = snapshot(root)
    error = refused(hippo("pack", "add", NAME, cwd=root))
    assert error == (
        f"{NAME} 0.1.0 is not a pack hippo can run: passes/{NAME}-verify.toml: prompt "
        "prompts/verify.md does not exist; nothing was installed"
    )
    assert snapshot(root) == before


def test_a_pass_named_like_one_here_is_refused(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    pack = make_pack(tmp_path / "src" / NAME, NAME, "0.1.0")
    (pack / "passes" / f"{NAME}-verify.toml").rename(pack / "passes" / "verify.toml")
    sha = tar_pack(pack, server.root / "twin.tar.gz")
    publish(server, tmp_path, version("0.1.0", archive="twin.tar.gz", sha=sha))
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0 has a pass named 'verify', and so does pack 'core' here; pass names "
        "must be unique; nothing was installed"
    )


def test_an_archive_that_cannot_be_fetched(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, version("0.1.0", archive="gone.tar.gz", sha="a" * 64))
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0: the archive {server.url}gone.tar.gz cannot be fetched "
        "(HTTP 404 File not found); nothing was installed"
    )


def test_add_refuses_what_is_here_already(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert refused(hippo("pack", "add", "core", cwd=root)) == (
        "core 0.1.0 is already installed here (builtin: hippo-memory 0.1.0); for a newer "
        "version run: hippo pack update core"
    )
    (root / ".hippo" / "packs" / NAME).mkdir()
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"a pack named '{NAME}' already runs here from .hippo/packs/{NAME}/ (not in the lock "
        f"file), and registry {server.url}index.toml has it from "
        f"{server.url}{NAME}-0.1.0.tar.gz; remove or rename that folder first"
    )
    (root / ".hippo" / "packs" / NAME).rmdir()
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"{NAME} 0.1.0 is already installed here (registry: {server.url}{NAME}-0.1.0.tar.gz); "
        f"for a newer version run: hippo pack update {NAME}"
    )


def test_a_name_in_no_registry_suggests_close_ones(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert refused(hippo("pack", "add", "notes-chek", cwd=root)) == (
        f"no pack named 'notes-chek' in the registries (hippo, {server.url}index.toml); "
        f"did you mean '{NAME}'?"
    )
    assert hippo("pack", "add", "Not A Name", cwd=root).code == 2


def test_adding_a_theme_says_how_to_turn_it_on(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    theme = make_theme(tmp_path / "src" / "strict", "strict", "1.0")
    sha = tar_pack(theme, server.root / "strict-1.0.tar.gz")
    write_index(
        server.root / "index.toml",
        [
            pack_entry(
                "strict", [version("1.0", archive="strict-1.0.tar.gz", sha=sha, overlays="core")]
            )
        ],
    )
    result = hippo("pack", "add", "strict", cwd=root)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[-1] == (
        "  a theme over 'core'; to turn it on: hippo config set themes '[\"strict\"]'"
    )
    # The reviewer persona it replaces is shown, with the diff, before it is ever on.
    assert lines[2] == (
        "  theme strict replaces the reviewer persona personas/verify-reviewer.md of core "
        "(the reviewer of verify): 2 line(s) added, 0 removed:"
    )
    assert lines[3:5] == [
        "    --- core/personas/verify-reviewer.md",
        "    +++ strict/personas/verify-reviewer.md",
    ]
    assert lines[-3:-1] == ["    +", "    +Be strict."]
    assert hippo("config", "set", "themes", '["strict"]', cwd=root).code == 0
    [core] = load_packs(Workspace.open(root), load_plugins())
    assert (core.name, core.themes) == ("core", ("strict",))


# The first-party packs


def test_add_a_first_party_pack_copies_it_from_hippo(root: Path, hippo: HippoRunner):
    result = hippo("pack", "add", "decisions", cwd=root)
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "added decisions 0.1.0 from hippo",
        "  runs from .hippo/packs/decisions/",
    ]
    shipped = load_plugins().packs()["decisions"].directory
    copied = root / ".hippo" / "packs" / "decisions"
    assert sorted(p.relative_to(copied) for p in copied.rglob("*") if p.is_file()) == sorted(
        p.relative_to(shipped)
        for p in shipped.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    entry = lock(root)["decisions"]
    files = entry.pop("files")
    assert entry == {
        "version": "0.1.0",
        "origin": "builtin",
        "source": "hippo-memory 0.1.0",
        "registry": "hippo",
    }
    assert isinstance(files, dict) and "passes/decisions.toml" in files
    theme = hippo("pack", "add", "core-strict", cwd=root)
    assert theme.code == 0, theme.err
    assert "hippo config set themes '[\"core-strict\"]'" in theme.out


# update


def test_update_installs_a_newer_version(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    first = released(server, tmp_path, "0.1.0")
    publish(server, tmp_path, first)
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    same = hippo("pack", "update", cwd=root)
    assert same.out.splitlines() == ["core 0.1.0 up to date", f"{NAME} 0.1.0 up to date"]
    file, sha = archive(server, tmp_path, "0.2.0", text="\nNew in 0.2.\n")
    publish(server, tmp_path, first, version("0.2.0", archive=file, sha=sha))
    result = hippo("pack", "update", cwd=root)
    assert result.code == 0, result.err
    assert result.out.splitlines() == ["core 0.1.0 up to date", f"{NAME} 0.1.0 -> 0.2.0"]
    prompt = root / ".hippo" / "packs" / NAME / "prompts" / "verify.md"
    assert prompt.read_text(encoding="utf-8").endswith("New in 0.2.\n")
    entry = lock(root)[NAME]
    assert (entry["version"], entry["sha256"]) == ("0.2.0", sha)
    assert entry["files"]["prompts/verify.md"] == hashlib.sha256(prompt.read_bytes()).hexdigest()  # type: ignore[index]
    assert not [p for p in (root / ".hippo").iterdir() if p.name.startswith(".pack-")]


def test_update_refuses_to_replace_edited_files_unless_forced(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    first = released(server, tmp_path, "0.1.0")
    publish(server, tmp_path, first)
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    installed = root / ".hippo" / "packs" / NAME
    (installed / "prompts" / "verify.md").write_text("Our own prompt.\n", encoding="utf-8")
    (installed / "NOTES.md").write_text("ours\n", encoding="utf-8")
    file, sha = archive(server, tmp_path, "0.2.0", text="\nNew.\n")
    publish(server, tmp_path, first, version("0.2.0", archive=file, sha=sha))
    before = snapshot(root)
    assert refused(hippo("pack", "update", NAME, cwd=root)) == (
        f"edited since they were installed: {NAME} (A NOTES.md, M prompts/verify.md); nothing "
        f"was updated; to replace them, losing the edits: hippo pack update {NAME} --force"
    )
    assert snapshot(root) == before
    forced = hippo("pack", "update", NAME, "--force", cwd=root)
    assert forced.code == 0, forced.err
    assert forced.out == f"{NAME} 0.1.0 -> 0.2.0\n"
    assert not (installed / "NOTES.md").exists()
    assert lock(root)[NAME]["version"] == "0.2.0"


def test_update_a_pack_not_installed(root: Path, hippo: HippoRunner):
    assert refused(hippo("pack", "update", "nope", cwd=root)) == (
        "no pack named 'nope' is installed here; installed: core"
    )


def test_update_replaces_a_builtin_pack_when_hippos_copy_changed(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    # As if an older hippo had installed another verify prompt, unedited since.
    old = b"The verify prompt of an older hippo.\n"
    (root / ".hippo" / "packs" / "core" / "prompts" / "verify.md").write_bytes(old)
    lock_file = root / ".hippo" / "packs.lock"
    text = lock_file.read_text(encoding="utf-8")
    current = hashlib.sha256((CORE / "prompts" / "verify.md").read_bytes()).hexdigest()
    lock_file.write_text(text.replace(current, hashlib.sha256(old).hexdigest()), encoding="utf-8")
    result = hippo("pack", "update", "core", cwd=root)
    assert result.code == 0, result.err
    assert result.out == "core 0.1.0 -> 0.1.0 (hippo's copy changed)\n"
    prompt = root / ".hippo" / "packs" / "core" / "prompts" / "verify.md"
    assert prompt.read_bytes() == (CORE / "prompts" / "verify.md").read_bytes()
    assert lock(root)["core"]["files"]["prompts/verify.md"] == current  # type: ignore[index]
    assert hippo("pack", "update", "core", cwd=root).out == "core 0.1.0 up to date\n"


# remove


def test_remove_deletes_the_folder_and_the_lock_entry(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    result = hippo("pack", "remove", NAME, cwd=root)
    assert result.code == 0, result.err
    assert result.out == f"removed {NAME} 0.1.0 (.hippo/packs/{NAME}/)\n"
    assert not (root / ".hippo" / "packs" / NAME).exists()
    assert sorted(lock(root)) == ["core"]
    assert refused(hippo("pack", "remove", NAME, cwd=root)) == (
        f"no pack named '{NAME}' is installed here; installed: core"
    )


def test_remove_refuses_edited_files_unless_forced(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    assert hippo("pack", "add", NAME, cwd=root).code == 0
    installed = root / ".hippo" / "packs" / NAME
    (installed / "personas" / "verify-reviewer.md").write_text("Ours.\n", encoding="utf-8")
    before = snapshot(root)
    assert refused(hippo("pack", "remove", NAME, cwd=root)) == (
        f"{NAME} has files edited since it was installed (M personas/verify-reviewer.md); "
        f"delete them anyway with: hippo pack remove --force {NAME}"
    )
    assert snapshot(root) == before
    assert hippo("pack", "remove", NAME, "--force", cwd=root).code == 0
    assert not installed.exists() and NAME not in lock(root)


def test_remove_a_folder_the_lock_does_not_know(root: Path, hippo: HippoRunner):
    hand = root / ".hippo" / "packs" / "hand-made"
    (hand / "passes").mkdir(parents=True)
    assert refused(hippo("pack", "remove", "hand-made", cwd=root)) == (
        ".hippo/packs/hand-made/ is not in the lock file, so hippo cannot tell whether it was "
        "edited; delete it anyway with: hippo pack remove --force hand-made"
    )
    assert hippo("pack", "remove", "--force", "hand-made", cwd=root).code == 0
    assert not hand.exists() and sorted(lock(root)) == ["core"]


def test_commands_outside_a_workspace_fail_in_one_line(tmp_path: Path, hippo: HippoRunner):
    for args in (("add", "decisions"), ("update",), ("remove", "core")):
        error = refused(hippo("pack", *args, cwd=tmp_path))
        assert error.startswith("no hippo workspace at ")
    assert os.listdir(tmp_path) == ["home"]


# A pack that runs from a distribution: pip, offline, in a throwaway virtual environment


def build_wheel(folder: Path, tmp_path: Path) -> Path:
    """A wheel of ``hippo-testpack`` 1.0, whose plugin registers the pack ``jira``."""
    import base64
    import zipfile

    pack = make_pack(tmp_path / "wheel-src" / "jira", "jira", "1.0")
    files: dict[str, bytes] = {
        "hippo_testpack/__init__.py": (
            b"from pathlib import Path\n\nfrom hippo_core import hookimpl\n\n\n"
            b"@hookimpl\ndef hippo_register_packs(register):\n"
            b'    register("jira", Path(__file__).parent / "jira")\n'
        ),
    }
    for path in sorted(pack.rglob("*")):
        if path.is_file():
            files[f"hippo_testpack/jira/{path.relative_to(pack).as_posix()}"] = path.read_bytes()
    info = "hippo_testpack-1.0.dist-info"
    files[f"{info}/METADATA"] = b"Metadata-Version: 2.1\nName: hippo-testpack\nVersion: 1.0\n"
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: hippo-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{info}/entry_points.txt"] = b"[hippo]\ntestpack = hippo_testpack\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True)
    wheel = folder / "hippo_testpack-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zip_:
        for name, data in files.items():
            zip_.writestr(name, data)
    return wheel


@pytest.mark.slow
def test_a_pack_from_a_distribution_is_pip_installed_and_runs_from_there(
    make_workspace: WorkspaceMaker, tmp_path: Path
):
    import subprocess

    wheels = build_wheel(tmp_path / "wheels", tmp_path).parent
    # The environment sees hippo (and pip) from this one; pip installs into it.
    venv = make_venv(tmp_path / "venv")
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    index = write_index(
        tmp_path / "reg" / "index.toml",
        [pack_entry("jira", [version("1.0", distribution="hippo-testpack==1.0")])],
    )
    root = make_workspace(settings_for(str(index)))
    env = {**offline_env(venv), "PIP_FIND_LINKS": str(wheels)}  # this pack's plugin loads

    def hippo(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "hippo_core", *args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )

    assert hippo("init").returncode == 0
    # It carries code: without a terminal to ask on, only --yes installs it.
    asked = hippo("pack", "add", "jira")
    assert asked.returncode == 1 and "jira 1.0 carries code" in asked.stderr
    assert "to install it: hippo pack add jira==1.0 --yes" in asked.stderr
    added = hippo("pack", "add", "jira", "--yes")
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines() == [  # pip is quiet
        f"added jira 1.0 from {index}",
        "  runs from the distribution hippo-testpack 1.0",
    ]
    wheel = wheels / "hippo_testpack-1.0-py3-none-any.whl"
    assert lock(root)["jira"] == {
        "version": "1.0",
        "origin": "distribution",
        "source": "hippo-testpack 1.0",
        "registry": str(index),
        "requirement": "hippo-testpack==1.0",
        "wheel": wheel.name,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
    }
    assert not (root / ".hippo" / "packs" / "jira").exists()
    again = hippo("pack", "add", "jira")
    assert again.returncode == 1
    assert again.stderr.startswith("error: jira 1.0 is already installed here (distribution")

    updated = hippo("pack", "update", "jira")
    assert updated.returncode == 0, updated.stderr
    assert updated.stdout.splitlines()[-1] == "jira 1.0 up to date"

    # remove stops it running here; without a terminal or --uninstall, pip keeps it.
    removed = hippo("pack", "remove", "jira")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.splitlines() == [
        "jira no longer runs here: dropped from the lock file and turned off in "
        ".hippo/settings.toml (disabled_packs)",
        "hippo-testpack 1.0 is still installed for every workspace of this environment; to "
        f"uninstall it: hippo pack remove jira --uninstall (or {python} -m pip uninstall "
        "hippo-testpack)",
    ]
    assert sorted(lock(root)) == ["core"]
    listed = hippo("pack", "list")
    assert "jira  off here (disabled_packs); hippo-testpack 1.0\n" in listed.stdout
    assert "jira" not in hippo("doctor").stdout.split("passes that dream here:")[1].split("\n")[0]
    gone = hippo("pack", "remove", "jira", "--uninstall")
    assert gone.stdout.splitlines()[-1] == "uninstalled hippo-testpack 1.0", gone.stderr
    # Added again, it runs here again (and pip installs it again).
    again = hippo("pack", "add", "jira", "--yes")
    assert again.returncode == 0, again.stderr
    settings = (root / ".hippo" / "settings.toml").read_text("utf-8")
    assert "disabled_packs = []" in settings and "jira" not in settings


def test_a_name_that_runs_from_a_distribution_is_refused_naming_both(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    from hippo_core import hookimpl
    from hippo_core.plugins.manager import PluginInfo

    shipped = make_pack(tmp_path / "dist-pack" / NAME, NAME, "3.0")

    class Foreign:
        @hookimpl
        def hippo_register_packs(self, register):  # type: ignore[no-untyped-def]
            register(NAME, shipped)

    plugins = load_plugins()
    plugins.pm.register(Foreign(), name="foreign")
    plugins.origins["foreign"] = PluginInfo("foreign", "hippo-foreign", "3.0")
    publish(server, tmp_path, released(server, tmp_path, "0.1.0"))
    before = snapshot(root)
    assert refused(hippo("pack", "add", NAME, cwd=root)) == (
        f"a pack named '{NAME}' already runs here from the distribution hippo-foreign 3.0, and "
        f"registry {server.url}index.toml has it from {server.url}{NAME}-0.1.0.tar.gz; to "
        "install that one, first: pip uninstall hippo-foreign"
    )
    assert snapshot(root) == before


def test_names_that_leave_the_packs_folder_are_refused(root: Path, hippo: HippoRunner):
    outside = root / ".hippo" / "keep"
    outside.mkdir()
    for name in ("../keep", "..", ".", "a/b"):
        result = hippo("pack", "remove", name, "--force", cwd=root)
        assert result.code == 2 and refused(result) == f"'{name}' is not a pack name"
        assert hippo("pack", "update", name, cwd=root).code == 2
    assert outside.is_dir() and (root / ".hippo" / "packs" / "core").is_dir()


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_linked_packs_folder_is_refused(root: Path, hippo: HippoRunner, tmp_path: Path):
    packs = root / ".hippo" / "packs"
    packs.rename(tmp_path / "elsewhere")
    packs.symlink_to(tmp_path / "elsewhere")
    assert refused(hippo("pack", "add", "decisions", cwd=root)) == (
        ".hippo/packs is a symbolic link; hippo does not follow links in packs"
    )
    assert not (tmp_path / "elsewhere" / "decisions").exists()


def test_an_archive_of_a_distributions_own_pack_that_requires_it_is_installed(
    root: Path, hippo: HippoRunner, server: Server, tmp_path: Path
):
    """Pack-author finding 15: the archive's pack.toml requires the distribution whose plugin
    registers the same pack; the archive's copy is installed and runs, with its plugin."""
    from hippo_core import hookimpl
    from hippo_core.plugins.manager import PluginInfo

    shipped = make_pack(tmp_path / "dist-pack" / NAME, NAME, "3.0")

    class Own:
        @hookimpl
        def hippo_register_packs(self, register):  # type: ignore[no-untyped-def]
            register(NAME, shipped)

    # The plugin stands for one of the distribution pytest (installed wherever the tests
    # run, so the archive's requirement is met).
    plugins = load_plugins()
    plugins.pm.register(Own(), name="own")
    plugins.origins["own"] = PluginInfo("own", "pytest", "3.0")
    pack = make_pack(tmp_path / "src" / NAME, NAME, "0.1.0")
    manifest = pack / "pack.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + 'requires = ["pytest"]\n', "utf-8")
    file = f"{NAME}-0.1.0.tar.gz"
    sha = tar_pack(pack, server.root / file)
    publish(server, tmp_path, version("0.1.0", archive=file, sha=sha))
    added = hippo("pack", "add", NAME, cwd=root)
    assert added.code == 0, added.err
    [ours] = [p for p in load_packs(Workspace.open(root), plugins) if p.name == NAME]
    assert ours.root == root / ".hippo" / "packs" / NAME
    from hippo_core.packs.running import load_here

    assert load_here(Workspace.open(root), plugins).left_out == []
