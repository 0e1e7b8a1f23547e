# Sourced by .ci/run: a real headless browser for the viewer's test (tests/test_sleep_viewer.py),
# Debian's chromium package, which Playwright for Python (in [dev]) drives: no browser
# download. Installing needs root (or sudo); without it, or if apt-get fails, the test skips.
if ! command -v chromium >/dev/null; then
  as_root=""
  [ "$(id -u)" -eq 0 ] || as_root="sudo -n"
  { $as_root apt-get update -q && DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q chromium; } >&2 ||
    echo "warning: chromium could not be installed, so the viewer's test skips" >&2
fi
