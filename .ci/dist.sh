#!/usr/bin/env bash
# Run by .ci/run: hippo as it would be published. python -m build makes the sdist and the
# wheel in isolation (its own setuptools, as a release would), twine checks both, and each
# installs with its dependencies from the package index into a fresh virtual environment,
# where hippo --version, hippo init and hippo context run in a new project, far from this
# checkout. tests/test_dist.py checks the same artefacts offline on every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q "build>=1.2" "twine>=6.1"
"$work/tools/bin/python" -m build -q --outdir "$work/dist" .
"$work/tools/bin/twine" check --strict "$work/dist"/*
for artefact in "$work/dist"/*.whl "$work/dist"/*.tar.gz; do
  name="$(basename "$artefact")"
  python3 -m venv "$work/venv-$name"
  "$work/venv-$name/bin/pip" install -q "$artefact"
  mkdir -p "$work/project-$name" "$work/home-$name"
  (
    cd "$work/project-$name"
    export HOME="$work/home-$name" HIPPO_HOME="$work/home-$name/hippo"
    "$work/venv-$name/bin/hippo" --version
    "$work/venv-$name/bin/hippo" init > /dev/null
    "$work/venv-$name/bin/hippo" context --task "first steps" > /dev/null
  )
  echo "dist: $name installs from the package index's dependencies and runs"
done
