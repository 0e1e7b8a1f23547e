# Sourced by .ci/run: Debian's PostgreSQL server programs, for the team index's tests
# (tests/postgres.py starts a cluster of its own in a temporary folder, as an unprivileged
# user, and stops it). Installed with apt-get when they are missing; without them those
# tests skip, saying so.
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [ -z "$(pg_bin)" ] && command -v apt-get >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >&2 ||
    echo "warning: apt-get could not install postgresql, so the team index tests skip" >&2
fi
if [ -n "$(pg_bin)" ]; then
  HIPPO_TEST_PG_BIN="$(pg_bin)"
  export HIPPO_TEST_PG_BIN
fi
