"""Check hippo's own pack registry: ``python registry/check.py [INDEX...]``.

With no INDEX it checks ``registry/index.toml``, hippo's first-party index, with the checks
of ``hippo registry check`` (:mod:`hippo_core.packs.checker`, shipped in hippo) and two of
this repository's own: every pack in ``hippo_packs/`` is listed, and
``hippo_packs/registry.toml`` is a byte-equal copy. Prints one line per problem and exits 1
when there is any, else prints a summary and exits 0. ``--write-schema`` writes
``registry/schema.json`` from the model in ``hippo_core/packs/registry.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # a checkout works without installing hippo

from hippo_core.packs.checker import check_index  # noqa: E402
from hippo_core.packs.registry import IndexModel, index_problems, schema  # noqa: E402

DEFAULT_INDEX = HERE / "index.toml"
SCHEMA_FILE = HERE / "schema.json"


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def shipped_root() -> Path:
    import hippo_packs

    return Path(hippo_packs.__file__).resolve().parent


def check_first_party(model: IndexModel, where: str) -> list[str]:
    problems = []
    listed = {pack.name for pack in model.pack}
    root = shipped_root()
    for manifest in sorted([*root.glob("*/pack.toml"), *root.glob("*/pack/pack.toml")]):
        name = (manifest.parent.parent if manifest.parent.name == "pack" else manifest.parent).name
        if name not in listed:
            problems.append(f"registry {where}: hippo ships the pack '{name}'; list it")
    copy = root / "registry.toml"
    if not copy.is_file() or copy.read_bytes() != DEFAULT_INDEX.read_bytes():
        problems.append(
            f"registry {where}: hippo_packs/registry.toml (the copy hippo reads) differs; "
            "cp registry/index.toml hippo_packs/registry.toml"
        )
    return problems


def _dist(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _shown(path: Path) -> str:
    cwd = Path.cwd()
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write-schema"]:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    if any(arg.startswith("-") for arg in argv):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    problems: list[str] = []
    counts = []
    for text in argv or [_shown(DEFAULT_INDEX)]:
        path = Path(text)
        result = check_index(path)
        counts.append(f"{text}: {result.packs} pack{'s' * (result.packs != 1)}")
        problems.extend(result.problems)
        if path.resolve() == DEFAULT_INDEX:
            raw = path.read_bytes()
            model, _ = index_problems(raw, text, as_json=False)
            if model is not None:
                problems.extend(check_first_party(model, text))
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"ok: {'; '.join(counts)}, no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
