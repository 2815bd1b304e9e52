"""A private PostgreSQL cluster for the many-workers tests (docs/companion.md, "Running on many
workers"): `initdb` into a fresh folder, the server on a unix socket in that folder, no TCP.

The tests' fixture uses `start`; by hand: `python tests/companion/pgcluster.py` starts one and
prints its DSN until Ctrl-C. PostgreSQL refuses to run as root, so on a machine where the tests
run as root (CI) the server runs as the `postgres` system user (the distribution's package makes
it) and the folder is handed to that user. A cluster that cannot start raises `ClusterFailed`
with the reason: the tests then fail, they never skip.

The settings are those docs/companion.md asks of an operator for erasure (`wal_recycle=off`),
plus `fsync=off`, which only a throwaway cluster may have.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SETTINGS = {
    "listen_addresses": "''",
    "wal_recycle": "off",  # old WAL segments are unlinked, never renamed for reuse (erasure)
    "fsync": "off",  # a throwaway cluster: speed over crash safety
    "max_connections": "60",
    "shared_buffers": "32MB",
    "log_min_messages": "warning",
}


class ClusterFailed(RuntimeError):
    """PostgreSQL could not be set up or started; the message says why and how to fix it."""


def bin_dir() -> Path:
    """Where initdb and pg_ctl are: on PATH, or the newest /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # a symlink to the version's own bin folder
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                      key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                      else 0)
    if not versions:
        raise ClusterFailed("PostgreSQL is not installed (no initdb on PATH or in "
                            "/usr/lib/postgresql/*/bin); install it, e.g. "
                            "`apt-get install -y postgresql`")
    return versions[-1].parent


@dataclass
class Cluster:
    root: Path
    bin: Path
    port: int
    user: str | None  # the system user the server runs as (None: ourselves)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "run"

    def dsn(self, dbname: str = "tactful") -> str:
        return f"postgresql:///{dbname}?host={self.socket_dir}&port={self.port}&user=postgres"

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              cwd=self.root, timeout=120)
        if check and done.returncode != 0:
            raise ClusterFailed(f"{argv[0]} failed ({done.returncode}): "
                                f"{(done.stderr or done.stdout).strip()[-600:]}")
        return done

    def psql(self, sql: str, dbname: str = "tactful") -> str:
        return self.run("psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
                        str(self.socket_dir), "-p", str(self.port), "-U", "postgres",
                        "-d", dbname, "-c", sql).stdout

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop",
                     check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(dbname: str = "tactful") -> Cluster:
    """A new cluster with one database `dbname`, running; `Cluster.stop` removes it all."""
    binaries = bin_dir()
    user: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise ClusterFailed("running as root and there is no `postgres` system user for "
                                "the server (initdb refuses root); install the distribution's "
                                "postgresql package, which creates it") from None
        user = "postgres"
    # Short and outside pytest's 0700 folders: the socket path must fit 107 bytes, and the
    # server's user must reach it.
    root = Path(tempfile.mkdtemp(prefix="tactful-pg-"))
    cluster = Cluster(root=root, bin=binaries, port=_free_port(), user=user)
    try:
        cluster.socket_dir.mkdir()
        if user is not None:
            entry = pwd.getpwnam(user)
            for path in (root, cluster.socket_dir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        cluster.run("initdb", "-D", str(cluster.data), "-A", "trust", "-U", "postgres",
                    "-E", "UTF8", "--no-instructions")
        with (cluster.data / "postgresql.conf").open("a") as conf:
            conf.write("".join(f"{k} = {v}\n" for k, v in SETTINGS.items()))
            conf.write(f"unix_socket_directories = '{cluster.socket_dir}'\nport = {cluster.port}\n")
        cluster.run("pg_ctl", "-D", str(cluster.data), "-l", str(root / "server.log"), "-w",
                    "-t", "60", "start")
        deadline = time.monotonic() + 30
        while cluster.run("pg_isready", "-h", str(cluster.socket_dir), "-p", str(cluster.port),
                          check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise ClusterFailed("the PostgreSQL server did not become ready in 30 s")
            time.sleep(0.1)
        cluster.psql(f"CREATE DATABASE {dbname}", dbname="postgres")
    except BaseException as exc:
        log = root / "server.log"
        detail = log.read_text(errors="replace")[-600:] if log.exists() else ""
        cluster.stop()
        if isinstance(exc, ClusterFailed):
            raise ClusterFailed(f"{exc} {detail}".strip()) from None
        raise
    return cluster


if __name__ == "__main__":
    running = start()
    print(running.dsn(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        running.stop()
