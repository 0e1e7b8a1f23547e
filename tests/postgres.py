"""A real PostgreSQL server for the team index's tests: Debian's ``postgresql`` binaries,
a cluster made by ``initdb`` in a temporary folder, run by an unprivileged user (PostgreSQL
refuses root), listening on 127.0.0.1 on a free port, stopped when the tests end.

The binaries are found in ``$HIPPO_TEST_PG_BIN`` (``.ci/postgres.sh`` sets it), else in
``/usr/lib/postgresql/*/bin``; without them the tests that need a server skip, saying so
(under CI they fail: tests/requires.py).
The cluster asks for a password over TCP (``scram-sha-256``), as a team's server would.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.requires import missing

USER, PASSWORD, DATABASE = "hippo", "s3cret-for-tests", "hippo_team"


def binaries() -> Path | None:
    given = os.environ.get("HIPPO_TEST_PG_BIN")
    candidates = [Path(given)] if given else sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    for folder in reversed(candidates):
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


@dataclass
class Postgres:
    """A running server: its port, the folder of its cluster and how to reach it."""

    bin: Path
    data: Path
    port: int
    run_as: list[str]

    def url(self, *, password: str = PASSWORD, database: str = DATABASE) -> str:
        return f"postgresql+psycopg://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str, database: str = DATABASE) -> str:
        """Run ``statement`` with psql as the cluster's owner, over its socket."""
        done = subprocess.run(
            [
                *self.run_as,
                str(self.bin / "psql"),
                "-h",
                str(self.data),
                "-p",
                str(self.port),
                "-U",
                USER,
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-Atc",
                statement,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def stop(self) -> None:
        subprocess.run(
            [*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"],
            capture_output=True,
            check=False,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        done = subprocess.run(
            [
                *self.run_as,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.data / "server.log"),
                "-o",
                options,
                "-w",
                "start",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (done.stdout, done.stderr, _log(self.data))


def _log(data: Path) -> str:
    with contextlib.suppress(OSError):
        return (data / "server.log").read_text()[-2000:]
    return ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> tuple[list[str], int, int]:
    """How to run a program as an unprivileged user, and that user's ids."""
    if os.geteuid() != 0:
        return [], os.geteuid(), os.getegid()
    user = pwd.getpwnam("nobody")
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) runs the server as nobody"
    command = [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    return command, user.pw_uid, user.pw_gid


@contextlib.contextmanager
def running_server() -> Iterator[Postgres]:
    folder = binaries()
    if folder is None:
        missing("no PostgreSQL: .ci/postgres.sh installs Debian's and sets HIPPO_TEST_PG_BIN")
    run_as, uid, gid = _run_as()
    top = Path(tempfile.mkdtemp(prefix="hippo-pg-"))
    top.chmod(0o755)
    data = top / "data"
    data.mkdir(mode=0o700)
    os.chown(data, uid, gid)
    secret = top / "password"
    secret.write_text(PASSWORD + "\n")
    os.chown(secret, uid, gid)
    init = subprocess.run(
        [
            *run_as,
            str(folder / "initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            f"--pwfile={secret}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
        check=False,
    )
    assert init.returncode == 0, (init.stdout, init.stderr)
    server = Postgres(folder, data, _free_port(), run_as)
    server.start()
    try:
        server.sql(f"CREATE DATABASE {DATABASE}", database="postgres")
        yield server
    finally:
        server.stop()
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Postgres]:
    with running_server() as server:
        yield server


@dataclass
class Database:
    """One empty database of a running server, for one test."""

    server: Postgres
    name: str

    def url(self, *, password: str = PASSWORD) -> str:
        return self.server.url(password=password, database=self.name)

    def sql(self, statement: str) -> str:
        return self.server.sql(statement, database=self.name)


@pytest.fixture
def postgres(postgres_server: Postgres) -> Iterator[Database]:
    """The session's server, with an empty database for this test."""
    name = f"t{time.monotonic_ns()}"
    postgres_server.sql(f"CREATE DATABASE {name}", database="postgres")
    yield Database(postgres_server, name)
    postgres_server.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", database="postgres")
