# Sourced by .ci/run: Debian's PostgreSQL server programs, for the team index's tests
# (tests/postgres.py starts a cluster of its own in a temporary folder, as an unprivileged
# user, and stops it).
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
[ -n "$(pg_bin)" ] || apt_install "the team index tests fail" postgresql
if [ -n "$(pg_bin)" ]; then
  HIPPO_TEST_PG_BIN="$(pg_bin)"
  export HIPPO_TEST_PG_BIN
fi
