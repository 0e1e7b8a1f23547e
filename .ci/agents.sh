# Sourced by .ci/run: the real agent programs the slow tests drive (tests/test_real_*.py),
# installed from npm into a cache kept between runs on one machine, each pinned to the release
# the research captured (Claude Code 2.1.332, OpenCode 1.18.33, Gemini CLI 0.61.0, Codex
# 0.171.0). Claude Code 2.1.332 must be asked for by version: a plain install on
# Node 20 picks an older release, since 2.1.332 declares Node 22 while its native binary runs
# on 20. npm and Node.js 20 or later must be on the machine already (Debian 12 packages Node.js
# 18). Without npm, or a package npm could not install, those tests fail under CI, saying so.
cache="${HIPPO_CI_CACHE:-$HOME/.cache/hippo-ci}"
agent() {  # agent FOLDER BINARY PACKAGE: install PACKAGE unless BINARY runs; print its path
  local bin="$cache/$1/node_modules/.bin/$2"
  if ! "$bin" --version >/dev/null 2>&1; then
    rm -rf "${cache:?}/$1"
    npm install --prefix "$cache/$1" --no-audit --no-fund --loglevel=error "$3" >&2 ||
      echo "warning: npm could not install $3, so the tests that drive it fail" >&2
  fi
  echo "$bin"
}
if command -v npm >/dev/null; then
  HIPPO_TEST_CLAUDE="$(agent npm-claude claude @anthropic-ai/claude-code@2.1.332)"
  HIPPO_TEST_OPENCODE="$(agent npm-opencode opencode opencode-ai@1.18.33)"
  HIPPO_TEST_GEMINI="$(agent npm-gemini gemini @google/gemini-cli@0.61.0)"
  HIPPO_TEST_CODEX="$(agent npm-codex codex @openai/codex@0.171.0)"
  export HIPPO_TEST_CLAUDE HIPPO_TEST_OPENCODE HIPPO_TEST_GEMINI HIPPO_TEST_CODEX
else
  echo "warning: no npm, so the tests that drive Claude Code, OpenCode, Gemini CLI and Codex fail" >&2
fi
