# Sourced by .ci/run: systemd-analyze, which reads the units `hippo schedule install --systemd`
# writes as systemd would (tests/test_schedule.py; hippo itself verifies units with it when it
# is there). It comes with Debian's systemd package, installed on a full Debian system but
# not in the slim images containers start from; nothing here runs systemd as a service.
command -v systemd-analyze >/dev/null || apt_install "the systemd units' test fails" systemd
