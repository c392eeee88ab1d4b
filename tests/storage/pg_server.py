"""A private PostgreSQL server the tests can stop and start (the database restart tests):
initdb into a temporary folder, loopback only, no fsync. Needs Debian's server binaries
(/usr/lib/postgresql/*/bin, package postgresql, which .ci/run installs); as root it runs
them as the postgres user, as .ci/run does."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SKIP_REASON = (
    "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb: Debian package postgresql, "
    "which .ci/run installs)"
)


def server_bin() -> Path | None:
    """The newest installed server's bin folder, None when there is none."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """A throw-away server in a new temporary folder on 127.0.0.1:`port`, trust logins,
    database `search`; `close()` stops it and removes the folder."""

    def __init__(self) -> None:
        bin_dir = server_bin()
        if bin_dir is None:
            raise RuntimeError(SKIP_REASON)
        # its own folder in /tmp, readable by the postgres user (pytest's are not)
        self.bin, self.folder, self.port = bin_dir, Path(tempfile.mkdtemp(prefix="search-test-pg-")), _free_port()
        self.data = self.folder / "data"
        self.folder.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-locale"
        )
        self.start()
        self._run(
            "psql",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            "CREATE DATABASE search",
        )

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/search"

    def _run(self, program: str, *args: str) -> None:
        cmd = [str(self.bin / program), *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{program} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c max_connections=100",
            "start",
        )  # commits durable: a restart keeps what it answered
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.25)
        raise RuntimeError("the PostgreSQL server does not accept connections")

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server (`-m immediate`: as a crash or a failover, no clean shutdown)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def close(self) -> None:
        if self.running():
            try:
                self.stop("fast")
            except RuntimeError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)
