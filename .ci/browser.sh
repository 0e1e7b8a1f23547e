# Sourced by .ci/run: a real headless browser for the viewer's test (tests/test_sleep_viewer.py),
# Debian's chromium package, which Playwright for Python (in [dev]) drives: no browser
# download.
command -v chromium >/dev/null || apt_install "the viewer's test fails" chromium
