# Sourced by .ci/run first: apt_install, for the Debian packages the slow tests drive
# (.ci/browser.sh, .ci/postgres.sh, .ci/systemd.sh). It needs root, or sudo without a
# password. When it cannot install, it warns and returns 0: the tests that need the package
# then fail under CI (tests/requires.py), naming what is missing.
apt_updated=""
apt_install() {  # apt_install "WHAT FAILS WITHOUT IT" PACKAGE...
  local fails="$1" as_root=""
  shift
  [ "$(id -u)" -eq 0 ] || as_root="sudo -n"
  # sudo starts apt-get with a clean environment: DEBIAN_FRONTEND goes through env.
  if command -v apt-get >/dev/null &&
    { [ -n "$apt_updated" ] || { $as_root apt-get update -q >&2 && apt_updated=yes; }; } &&
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2; then
    return 0
  fi
  echo "warning: apt-get could not install $*, so $fails" >&2
}
