"""The pack registry: the index format, the first-party index and its checker, the cache of
fetched indexes, and ``hippo pack search`` against a real HTTP server on 127.0.0.1.

The helpers here (packs, archives, indexes, the server) are shared with
``tests/test_pack_install.py``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from hippo_core.base.errors import HippoError
from hippo_core.packs.archive import FetchError, read_bytes
from hippo_core.packs.index import Registry, parse_index
from hippo_core.packs.registries import cache_file
from hippo_core.packs.registry import index_problems

from .conftest import HippoRunner, WorkspaceMaker
from .local_http import start_server

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "hippo_packs" / "core"
CHECKER = ROOT / "registry" / "check.py"


# Helpers shared with test_pack_install.py


def make_pack(folder: Path, name: str, version: str, *, text: str = "") -> Path:
    """A valid pack ``name`` in ``folder``: hippo's core, renamed, its passes renamed so that
    they do not clash with core's (pass names are unique across packs)."""
    shutil.copytree(CORE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "pack.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ndescription = "A test pack."\n'
        'protocol = "HIPPO_V1"\nhippo = ">=0.1"\nlicense = "MIT"\n',
        encoding="utf-8",
    )
    for pass_file in sorted((folder / "passes").glob("*.toml")):
        pass_file.rename(pass_file.with_name(f"{name}-{pass_file.name}"))
    if text:
        (folder / "prompts" / "verify.md").write_text(
            (folder / "prompts" / "verify.md").read_text(encoding="utf-8") + text, encoding="utf-8"
        )
    return folder


def make_theme(folder: Path, name: str, version: str) -> Path:
    """A theme over core: its own verify reviewer persona."""
    (folder / "personas").mkdir(parents=True)
    (folder / "pack.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ndescription = "A stricter reviewer."\n'
        'protocol = "HIPPO_V1"\nhippo = ">=0.1"\noverlays = "core"\n',
        encoding="utf-8",
    )
    (folder / "personas" / "verify-reviewer.md").write_text(
        (CORE / "personas" / "verify-reviewer.md").read_text(encoding="utf-8") + "\nBe strict.\n",
        encoding="utf-8",
    )
    return folder


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tar_pack(pack: Path, dest: Path, *, top: str | None = "") -> str:
    """``pack`` as a .tar.gz at ``dest`` (inside a top folder unless ``top`` is None)."""
    prefix = pack.name if top == "" else top
    with tarfile.open(dest, "w:gz") as tar:
        for path in sorted(pack.rglob("*")):
            rel = path.relative_to(pack).as_posix()
            tar.add(path, arcname=f"{prefix}/{rel}" if prefix else rel, recursive=False)
    return sha256(dest)


def zip_pack(pack: Path, dest: Path) -> str:
    with zipfile.ZipFile(dest, "w") as zip_:
        for path in sorted(pack.rglob("*")):
            if path.is_file():
                zip_.write(path, path.relative_to(pack).as_posix())
    return sha256(dest)


def tar_with(dest: Path, members: list[tarfile.TarInfo], pack: Path | None = None) -> str:
    """A .tar.gz holding a valid ``pack`` (when given) plus the raw ``members``."""
    with tarfile.open(dest, "w:gz") as tar:
        if pack is not None:
            for path in sorted(pack.rglob("*")):
                tar.add(path, arcname=path.relative_to(pack).as_posix(), recursive=False)
        for member in members:
            data = b"x" * member.size if member.isreg() else None
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return sha256(dest)


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 1) -> Any:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = size if kind == tarfile.REGTYPE else 0
    return info


def version(
    number: str,
    *,
    archive: str = "",
    sha: str = "",
    distribution: str = "",
    hippo: str = ">=0.1",
    passes: list[str] | None = None,
    overlays: str = "",
    yanked: str = "",
) -> dict[str, Any]:
    source = {"distribution": distribution} if distribution else {"archive": archive, "sha256": sha}
    entry: dict[str, Any] = {"version": number, "hippo": hippo, "source": source}
    if passes is not None:
        entry["passes"] = passes
    if overlays:
        entry["overlays"] = overlays
    if yanked:
        entry["yanked"] = yanked
    return entry


def pack_entry(name: str, versions: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "summary": f"The {name} pack.",
        "license": "MIT",
        **more,
        "versions": versions,
    }


def write_index(path: Path, packs: list[dict[str, Any]]) -> Path:
    """An index file (TOML, or JSON when ``path`` ends in .json)."""
    import tomlkit

    data = {"format": 1, "pack": packs}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    else:
        path.write_text(tomlkit.dumps(data), encoding="utf-8")
    return path


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1 serving the files of ``root``."""

    root: Path
    url: str
    stop: Any


@contextlib.contextmanager
def serving(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    root.mkdir(parents=True, exist_ok=True)

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    url, stop = start_server(functools.partial(Handler, directory=str(root)), monkeypatch)
    try:
        yield Server(root, url, stop)
    finally:
        stop()


def settings_for(*registries: str) -> str:
    return f"registries = {json.dumps(list(registries))}\n"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    with serving(tmp_path / "served", monkeypatch) as running:
        yield running


def published(server: Server, tmp_path: Path) -> str:
    """An index on the server listing ``notes-check`` 0.1.0 and 0.2.0 (archives beside it)."""
    entries = []
    for number in ("0.1.0", "0.2.0"):
        pack = make_pack(tmp_path / "src" / number / "notes-check", "notes-check", number)
        sha = tar_pack(pack, server.root / f"notes-check-{number}.tar.gz")
        entries.append(version(number, archive=f"notes-check-{number}.tar.gz", sha=sha))
    entry = pack_entry("notes-check", entries, tags=["Verification", "notes"])
    write_index(server.root / "index.toml", [entry])
    return server.url + "index.toml"


# The first-party index


def test_hippo_ships_a_byte_equal_copy_of_the_first_party_index():
    assert (ROOT / "hippo_packs" / "registry.toml").read_bytes() == (
        ROOT / "registry" / "index.toml"
    ).read_bytes(), "cp registry/index.toml hippo_packs/registry.toml"


def test_the_schema_is_generated_from_the_model():
    from hippo_core.packs.registry import schema

    expected = json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert (ROOT / "registry" / "schema.json").read_text(encoding="utf-8") == expected, (
        "registry/schema.json is stale: run python registry/check.py --write-schema"
    )


def test_the_first_party_index_lists_core_decisions_and_core_strict():
    from hippo_core.packs.registries import first_party, load_index

    index = load_index(first_party())
    assert sorted(index.packs) == ["core", "core-strict", "decisions", "sleep"]
    core = index.packs["core"].releases[0]
    assert (core.version, core.passes, core.distribution) == (
        "0.1.0",
        ("consolidate", "verify"),
        "hippo-memory>=0.1",
    )
    assert index.packs["core-strict"].releases[0].overlays == "core"
    assert index.packs["decisions"].releases[0].passes == ("decisions",)
    assert all(p.license == "MIT" and p.releases[0].shipped for p in index.packs.values())


def run_checker(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), *args], cwd=cwd, capture_output=True, text=True
    )


def test_the_checker_passes_on_the_first_party_registry():
    result = run_checker()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok: registry/index.toml: 4 packs")


def test_the_checker_passes_on_an_index_with_good_archives(tmp_path: Path):
    pack = make_pack(tmp_path / "src" / "extra", "extra", "1.0")
    (tmp_path / "dist").mkdir()
    sha = tar_pack(pack, tmp_path / "dist" / "extra-1.0.tgz")
    index = write_index(
        tmp_path / "index.json",
        [
            pack_entry(
                "extra",
                [
                    version(
                        "1.0",
                        archive="dist/extra-1.0.tgz",
                        sha=sha,
                        passes=["extra-consolidate", "extra-verify"],
                    )
                ],
            )
        ],
    )
    result = run_checker(str(index))
    assert result.returncode == 0, result.stdout
    assert "1 pack, no problems" in result.stdout


def test_the_checker_names_every_problem_of_a_broken_index(tmp_path: Path):
    pack = make_pack(tmp_path / "src" / "extra", "extra", "1.0")
    (tmp_path / "dist").mkdir()
    sha = tar_pack(pack, tmp_path / "dist" / "extra-1.0.tar.gz")
    index = write_index(
        tmp_path / "index.toml",
        [
            pack_entry(
                "extra",
                [
                    version("1.0", archive="dist/extra-1.0.tar.gz", sha=sha, passes=["verify"]),
                    version("1.0.0", archive="dist/missing.tar.gz", sha="a" * 64),
                    version("2.0", archive="dist/extra-1.0.tar.gz", sha="b" * 64),
                ],
            ),
            pack_entry("decisions", [version("9.0", distribution="hippo-memory>=0.1")]),
            pack_entry("extra", [version("not a version", distribution="x")]),
        ],
    )
    result = run_checker(str(index))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    where = f"registry {index}"
    expected = [
        f"{where}: pack 'extra': listed twice; give each pack one entry",
        f"{where}: pack 'extra' version 1.0.0: listed twice (also as 1.0); versions are unique",
        f"{where}: pack 'extra' version not a version: not a version like 1.0 or 0.2.1 (PEP 440)",
        "its passes are [extra-consolidate, extra-verify], the index says [verify]",
        "dist/missing.tar.gz: No such file or directory",
        f"its sha256 is {sha}, the index says {'b' * 64}",
        "hippo_packs/decisions/: pack.toml says version 0.1.0, the index 9.0",
    ]
    for text in expected:
        assert any(text in line for line in lines), (text, lines)
    assert all(line.startswith(f"{where}: ") for line in lines)


def test_the_checker_fails_on_a_malformed_index(tmp_path: Path):
    index = tmp_path / "index.toml"
    index.write_text('format = 1\n[[pack]]\nname = "x"\n', encoding="utf-8")
    result = run_checker(str(index))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"registry {index}: pack 'x': missing key 'summary'",
        f"registry {index}: pack 'x': missing key 'license'",
        f"registry {index}: pack 'x': missing key 'versions'",
    ]


# The index format


def problems(text: str, *, as_json: bool = False) -> list[str]:
    return index_problems(text.encode(), "idx", as_json=as_json)[1]


ENTRY = """\
format = 1
[[pack]]
name = "x"
summary = "One line."
license = "MIT"
[[pack.versions]]
version = "0.2.0"
hippo = ">=0.1"
"""


@pytest.mark.parametrize(
    ("tail", "problem"),
    [
        (
            'source = { archive = "https://h/x-0.2.0.tar.gz" }',
            "pack 'x' version 0.2.0: source needs sha256 with an archive",
        ),
        (
            'source = { archive = "x.tar.gz", sha256 = "abc" }',
            "pack 'x' version 0.2.0: source: sha256 must be 64 hex digits (sha256sum prints it)",
        ),
        (
            f'source = {{ archive = "x.rar", sha256 = "{"a" * 64}" }}',
            "pack 'x' version 0.2.0: source: archive must end in .tar.gz, .tgz, .zip",
        ),
        (
            f'source = {{ archive = "http://example.org/x.zip", sha256 = "{"a" * 64}" }}',
            "pack 'x' version 0.2.0: source: archive http://example.org/x.zip: plain http is "
            "refused; use https (http only for 127.0.0.1 or localhost)",
        ),
        (
            'source = { distribution = "a", archive = "x.zip", sha256 = "' + "a" * 64 + '" }',
            "pack 'x' version 0.2.0: source has both distribution and archive; give one",
        ),
        (
            "source = {}",
            "pack 'x' version 0.2.0: source needs distribution (a pip requirement) or archive",
        ),
        (
            'source = { distribution = "no such thing!" }',
            "pack 'x' version 0.2.0: source: distribution 'no such thing!' is not a requirement "
            "like hippo-jira>=1.2",
        ),
        (
            'source = { distrbution = "a" }',
            "pack 'x' version 0.2.0: source: unknown key 'distrbution' - did you mean "
            "'distribution'?",
        ),
        (
            'passes = ["a"]\noverlays = "core"\nsource = { distribution = "a" }',
            "pack 'x' version 0.2.0: a theme (overlays) provides no passes; passes must be empty",
        ),
        (
            'pases = ["a"]\nsource = { distribution = "a" }',
            "pack 'x' version 0.2.0: unknown key 'pases' - did you mean 'passes'?",
        ),
        (
            'passes = "a"\nsource = { distribution = "a" }',
            "pack 'x' version 0.2.0: 'passes' must be a list",
        ),
        ("", "pack 'x' version 0.2.0: missing key 'source'"),
    ],
)
def test_each_problem_names_the_registry_and_the_entry(tail: str, problem: str):
    assert problems(ENTRY + tail + "\n") == [f"registry idx: {problem}"]


def test_index_level_problems():
    assert problems("format = 2\n") == ["registry idx: 'format' must be 1"]
    assert problems("pack = []\n") == ["registry idx: missing key 'format'"]
    assert problems("format = 1\npacks = []\n") == [
        "registry idx: unknown key 'packs' - did you mean 'pack'?"
    ]
    [line] = problems("format = \n")
    assert line.startswith("registry idx: not valid TOML: ")
    assert problems("[1]", as_json=True) == [
        "registry idx: must be a JSON object with format and pack"
    ]
    bad_name = ENTRY.replace('name = "x"', 'name = "X Y"') + 'source = { distribution = "a" }\n'
    assert problems(bad_name) == [
        "registry idx: pack 'X Y': name must be lower-case letters, digits, '-' or '_', "
        "starting with a letter or digit (as in pack.toml)"
    ]
    bad_hippo = ENTRY.replace(">=0.1", "newer") + 'source = { distribution = "a" }\n'
    assert problems(bad_hippo) == [
        "registry idx: pack 'x' version 0.2.0: hippo 'newer' is not a version specifier "
        "like >=0.1 or >=0.1,<2"
    ]


def test_a_json_index_has_the_same_structure(tmp_path: Path):
    path = write_index(
        tmp_path / "index.json",
        [
            pack_entry(
                "x",
                [
                    version("1.0", distribution="hippo-x>=1"),
                    version("1.1", distribution="hippo-x>=1.1"),
                ],
            )
        ],
    )
    index = parse_index(path.read_bytes(), Registry("local", str(path)))
    assert [r.version for r in index.packs["x"].releases] == ["1.1", "1.0"]


def test_a_malformed_index_raises_one_line_naming_the_first_problem():
    raw = (ENTRY + "source = {}\npasses = [1]\n").encode()
    with pytest.raises(HippoError) as caught:
        parse_index(raw, Registry("r", "/r/index.toml"))
    assert (
        str(caught.value)
        == "registry /r/index.toml: pack 'x' version 0.2.0: 'passes.0' must be a string"
    )


def test_archives_resolve_against_the_index():
    url = Registry("u", "https://h.example/hippo/index.toml")
    assert url.resolve("x-1.tar.gz") == "https://h.example/hippo/x-1.tar.gz"
    assert url.resolve("https://o.example/y.zip") == "https://o.example/y.zip"
    path = Registry("p", "/srv/reg/index.toml")
    assert path.resolve("dist/x.zip") == "/srv/reg/dist/x.zip"
    assert path.resolve("/abs/x.zip") == "/abs/x.zip"


def test_fetching_is_capped_and_refuses_plain_http(server: Server):
    (server.root / "big.toml").write_bytes(b"#" * 5000)
    with pytest.raises(FetchError, match="larger than"):
        read_bytes(server.url + "big.toml", cap=4096)
    assert read_bytes(server.url + "big.toml") == b"#" * 5000
    with pytest.raises(FetchError, match="plain http is refused"):
        read_bytes("http://example.org/index.toml")
    with pytest.raises(FetchError, match="HTTP 404"):
        read_bytes(server.url + "missing.toml")


# Search, the cache and offline behaviour


def test_search_fetches_once_then_reads_the_cache_offline(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, server: Server, tmp_path: Path
):
    url = published(server, tmp_path)
    root = make_workspace(settings_for(url))
    first = hippo("pack", "search", "VERIFICATION", cwd=root)
    assert first.code == 0, first.err
    assert f"fetching registry {url} (not fetched before)" in first.err
    [line] = first.out.splitlines()
    assert line.split()[:3] == ["notes-check", "0.2.0", url]
    cached = json.loads(cache_file(url).read_text(encoding="utf-8"))
    assert cached["location"] == url and cached["fetched"].endswith("Z")
    assert cached["index"] == (server.root / "index.toml").read_text(encoding="utf-8")

    server.stop()
    again = hippo("pack", "search", "--json", cwd=root)
    assert again.code == 0 and again.err == ""
    hits = {hit["name"]: hit for hit in json.loads(again.out)}
    assert sorted(hits) == ["core", "core-strict", "decisions", "notes-check", "sleep"]
    assert hits["notes-check"] == {
        "name": "notes-check",
        "version": "0.2.0",
        "summary": "The notes-check pack.",
        "registry": url,
        "installed": None,
        "tags": ["Verification", "notes"],
        "license": "MIT",
        "homepage": "",
        "code": False,
    }

    # update fetches again: unreachable, the cached copy is used with a warning.
    updated = hippo("pack", "update", cwd=root)
    assert updated.code == 0, updated.err
    stamp = cached["fetched"].replace("T", " ").removesuffix("Z")
    assert f"warning: registry {url}: cannot be fetched (" in updated.err
    assert f"using the copy fetched {stamp} UTC" in updated.err


def test_search_shows_what_is_installed_here(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace()
    assert hippo("init", cwd=root).code == 0
    result = hippo("pack", "search", "CORE", cwd=root)
    assert result.code == 0
    rows = [line.split() for line in result.out.splitlines()]
    assert rows[0][:5] == ["core", "0.1.0", "hippo", "installed", "0.1.0"]
    # name or summary or tag: sleep's summary speaks of cores
    assert [row[0] for row in rows] == ["core", "core-strict", "sleep"]
    hits = json.loads(hippo("pack", "search", "--json", cwd=root).out)
    assert {h["name"]: h["installed"] for h in hits} == {
        "core": "0.1.0",
        "core-strict": None,
        "decisions": None,
        "sleep": None,
    }


def test_search_outside_a_workspace_reads_hippos_own_registry(tmp_path: Path, hippo: HippoRunner):
    result = hippo("pack", "search", "decisions", cwd=tmp_path)
    assert result.code == 0
    assert result.out.split()[:3] == ["decisions", "0.1.0", "hippo"]
    none = hippo("pack", "search", "zzz", cwd=tmp_path)
    assert (none.code, none.out, none.err) == (0, "", "no pack matches 'zzz'\n")


def test_an_unreachable_registry_never_fetched_is_a_warning_and_the_others_are_listed(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, server: Server
):
    """Pack-author finding 10: one dead registry no longer hides hippo's own packs."""
    url = server.url + "index.toml"
    server.stop()
    root = make_workspace(settings_for(url))
    result = hippo("pack", "search", cwd=root)
    assert result.code == 0, result.err
    assert [line.split()[0] for line in result.out.splitlines()] == [
        "core",
        "core-strict",
        "decisions",
        "sleep",
    ]
    warning = result.err.splitlines()[-1]
    assert warning.startswith(f"warning: registry {url}: cannot be fetched (")
    assert warning.endswith(
        ") and never was; check the URL and the network, or remove it from registries in "
        "the settings"
    )
    assert not cache_file(url).exists()
    # add finds a pack of the registries that can be read, and names the one that cannot.
    assert hippo("init", cwd=root).code == 0
    added = hippo("pack", "add", "decisions", cwd=root)
    assert added.code == 0 and added.out.startswith("added decisions 0.1.0 from hippo"), added.err
    missing = hippo("pack", "add", "style-check", cwd=root)
    assert missing.code == 1
    assert missing.err.splitlines()[-1].startswith(
        f"error: no pack named 'style-check' in the registries (hippo; {url} cannot be read)"
    )


def test_a_malformed_registry_is_named_and_not_cached(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, server: Server
):
    (server.root / "index.toml").write_text(ENTRY + "source = {}\n", encoding="utf-8")
    url = server.url + "index.toml"
    root = make_workspace(settings_for(url))
    result = hippo("pack", "search", cwd=root)
    assert result.code == 0 and result.out.startswith("core ")
    assert result.err.splitlines()[-1] == (
        f"warning: registry {url}: pack 'x' version 0.2.0: source needs distribution "
        "(a pip requirement) or archive"
    )
    assert not cache_file(url).exists()


def test_a_registry_over_plain_http_is_refused(make_workspace: WorkspaceMaker, hippo: HippoRunner):
    root = make_workspace(settings_for("http://example.org/index.toml"))
    result = hippo("pack", "search", cwd=root)
    assert result.code == 2
    assert result.err == (
        "error: settings registries: http://example.org/index.toml: plain http is refused; "
        "use https (http only for 127.0.0.1 or localhost)\n"
    )


def test_a_path_registry_is_read_each_time(
    make_workspace: WorkspaceMaker, hippo: HippoRunner, tmp_path: Path
):
    index = write_index(
        tmp_path / "reg" / "index.toml",
        [pack_entry("one", [version("1.0", distribution="hippo-one")])],
    )
    root = make_workspace(settings_for(str(index)))
    assert "one" in hippo("pack", "search", "one", cwd=root).out
    write_index(index, [pack_entry("two", [version("1.0", distribution="hippo-two")])])
    result = hippo("pack", "search", "o", cwd=root)
    names = [line.split()[0] for line in result.out.splitlines()]
    assert "two" in names and "one" not in names
    assert not (tmp_path / "home" / "hippo" / "registries").exists()


def test_a_relative_path_registry_is_relative_to_the_workspace(
    make_workspace: WorkspaceMaker, hippo: HippoRunner
):
    root = make_workspace(settings_for("packs-index/index.json"))
    write_index(
        root / "packs-index" / "index.json",
        [pack_entry("local", [version("1.0", distribution="d")])],
    )
    (root / "sub").mkdir()
    result = hippo("pack", "search", "local", "--json", cwd=root / "sub")
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["registry"] == "packs-index/index.json"
    missing = make_workspace(settings_for("nowhere/index.toml"))
    failed = hippo("pack", "search", cwd=missing)
    assert failed.code == 0
    assert failed.err == (
        f"warning: registry {missing / 'nowhere' / 'index.toml'}: cannot be read "
        "(No such file or directory)\n"
    )


def test_the_wheel_ships_the_first_party_index():
    import tomllib

    values = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "registry.toml" in values["tool"]["setuptools"]["package-data"]["hippo_packs"]


def test_a_misspelt_key_is_named_before_the_key_it_leaves_missing(
    make_workspace, hippo, tmp_path: Path
):
    """``summry`` is an unknown key and a missing ``summary``: the first line a person sees
    names the typo (newcomer defect 13), and the registry's path reads as its folder."""
    misspelt = ENTRY.replace("summary =", "summry =") + 'source = { distribution = "a" }\n'
    assert problems(misspelt) == [
        "registry idx: pack 'x': unknown key 'summry' - did you mean 'summary'?",
        "registry idx: pack 'x': missing key 'summary'",
    ]
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "index.toml").write_text(misspelt, encoding="utf-8")
    root = make_workspace('registries = ["../team/index.toml"]\n')
    run = hippo("pack", "search", cwd=root)
    assert run.err == (
        f"warning: registry {tmp_path}/team/index.toml: pack 'x': unknown key 'summry' - did "
        "you mean 'summary'? (and 1 more problems)\n"
    )
