"""A private PostgreSQL cluster for the tests, the server benchmark and development.

``initdb`` in a folder of its own, a unix socket directory inside it, a free 127.0.0.1 port and a
random password (scram-sha-256, so the password-redaction paths are exercised for real). PostgreSQL
refuses to run as root; as root the cluster runs as the ``postgres`` user that Debian's package
creates, and the folder is given to that user.

    python -m scripts.pgcluster start DIR     # a fresh cluster in DIR (created); prints its DSN
    python -m scripts.pgcluster dsn DIR       # the DSN of the cluster in DIR
    python -m scripts.pgcluster stop DIR      # stop it (fast, then immediate, then SIGKILL) and delete DIR

Robustness: a start that fails because the port was taken meanwhile retries on another port; the
socket directory is private to the cluster, so a stale socket of another run never matters;
``stop`` escalates until the postmaster that this folder started is gone, checked by its pid file
and its command line, never by a process name. ``clean_stale`` removes the folders (and stops the
clusters) of earlier test runs whose owning process has died.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STALE_PREFIX = "afm-pg-"
START_ATTEMPTS = 5


def log_tail(path: Path, chars: int) -> str:
    """The last ``chars`` characters of a log file, or "" when it cannot be read (also for the tests' servers)."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


class ClusterError(RuntimeError):
    """PostgreSQL is not installed, or the cluster could not be created, started or stopped."""


def find_bindir() -> Path:
    """The folder with initdb, pg_ctl and postgres: ``$AFM_PG_BINDIR``, Debian's newest, or ``PATH``."""
    candidates = [os.environ.get("AFM_PG_BINDIR", "")]
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(re.sub(r"\D", "", p) or 0), reverse=True
    )
    found = shutil.which("initdb")
    candidates.append(str(Path(found).resolve().parent) if found else "")
    for folder in filter(None, candidates):
        if all((Path(folder) / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    raise ClusterError("PostgreSQL server binaries not found (apt-get install postgresql, or set AFM_PG_BINDIR)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class PgCluster:
    """One cluster in ``base``: ``data/``, ``sock/``, ``postgres.log`` and ``cluster.json`` (port, password)."""

    base: Path
    port: int
    password: str
    bindir: str
    user: str = "afm"
    owner_pid: int | None = None  # the process whose death makes the folder stale (tests); None: kept

    # ------------------------------------------------------------------ paths and addresses

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def sockets(self) -> Path:
        return self.base / "sock"

    @property
    def log(self) -> Path:
        return self.base / "postgres.log"

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{dbname}"

    def _save(self) -> None:
        state = asdict(self)
        state["base"] = str(self.base)
        path = self.base / "cluster.json"
        path.write_text(json.dumps(state))
        path.chmod(0o600)

    @classmethod
    def load(cls, base: Path) -> PgCluster:
        state = json.loads((Path(base) / "cluster.json").read_text())
        state["base"] = Path(state["base"])
        return cls(**state)

    # ------------------------------------------------------------------ running as an unprivileged user

    def _run_as(self) -> dict[str, Any]:
        """``subprocess`` arguments that drop root to the ``postgres`` user (PostgreSQL refuses root)."""
        if os.geteuid() != 0:
            return {}
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            raise ClusterError("running as root and there is no 'postgres' user to run PostgreSQL as") from None
        return {
            "user": pw.pw_uid,
            "group": pw.pw_gid,
            "extra_groups": [],
            "env": {**os.environ, "HOME": pw.pw_dir, "USER": "postgres", "LOGNAME": "postgres"},
        }

    def _tool(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(self.bindir) / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            **self._run_as(),
        )

    # ------------------------------------------------------------------ life cycle

    @classmethod
    def create(
        cls, base: Path | None = None, *, owner_pid: int | None = None, wal_segment_mb: int | None = None
    ) -> PgCluster:
        """initdb a new cluster in ``base`` (default: a fresh temporary folder) and start it.
        ``wal_segment_mb=1`` keeps WAL files under a small file-size limit (see ``start``)."""
        base = Path(base) if base else Path(tempfile.mkdtemp(prefix=STALE_PREFIX))
        base.mkdir(parents=True, exist_ok=True)
        if any(base.iterdir()):
            raise ClusterError(f"{base} is not empty")
        base.chmod(0o700)
        cluster = cls(base, _free_port(), secrets.token_urlsafe(18), str(find_bindir()), owner_pid=owner_pid)
        cluster.sockets.mkdir()
        pwfile = base / "pwfile"
        pwfile.write_text(cluster.password + "\n")
        run_as = cluster._run_as()
        if run_as:
            for path in (base, cluster.sockets, pwfile):
                os.chown(path, run_as["user"], run_as["group"])
        cluster._save()
        done = cluster._tool(
            "initdb",
            "-D",
            str(cluster.data),
            "-U",
            cluster.user,
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
            *([f"--wal-segsize={wal_segment_mb}"] if wal_segment_mb else []),
        )
        pwfile.unlink()
        if done.returncode != 0:
            raise ClusterError(f"initdb failed: {(done.stderr or done.stdout).strip()[-800:]}")
        cluster.start()
        return cluster

    def start(self) -> None:
        """Start the postmaster; a port taken meanwhile is retried on another."""
        for attempt in range(START_ATTEMPTS):
            options = f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1"
            done = self._tool(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", options, "start"
            )
            if done.returncode == 0:
                return
            if attempt + 1 < START_ATTEMPTS and "already in use" in self._log_tail():
                self.port = _free_port()  # someone took the port between our probe and the bind
                self._save()
                continue
            raise ClusterError(
                f"pg_ctl start failed: {(done.stderr or done.stdout).strip()[-400:]}\n{self._log_tail()}"
            )

    def _log_tail(self) -> str:
        return log_tail(self.log, 1500)

    def postmaster_pid(self) -> int | None:
        """The pid in ``postmaster.pid`` when that process is alive and serves this data folder."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            return None
        return pid if str(self.data) in cmdline and _pid_alive(pid) else None

    def stop(self, mode: str = "fast") -> None:
        """Stop the postmaster: ``mode`` first, then immediate, then SIGKILL of this cluster's postmaster."""
        for step in dict.fromkeys([mode, "immediate"]):
            if self.postmaster_pid() is None:
                return
            self._tool("pg_ctl", "-D", str(self.data), "-m", step, "-w", "-t", "30", "stop", timeout=60)
        pid = self.postmaster_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)  # its backends exit when they see the postmaster gone
            deadline = time.monotonic() + 10
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)

    def destroy(self) -> None:
        """Stop the cluster and delete its folder."""
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def limit_file_size(self, limit: int | None) -> None:
        """Set (or, with ``None``, lift) the file-size limit of the running postmaster and every backend:
        a write past it fails like a write to a full disk. New backends inherit the postmaster's limit."""
        for pid in self.server_pids():
            set_file_size_limit(pid, limit, **self._run_as())

    def server_pids(self) -> list[int]:
        """The postmaster and its children (backends and auxiliary processes)."""
        pid = self.postmaster_pid()
        if pid is None:
            return []
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            children = []
        return [pid, *map(int, children)]

    # ------------------------------------------------------------------ databases

    def admin(self) -> Any:
        """An autocommit connection to the ``postgres`` database, as the superuser."""
        import psycopg

        return psycopg.connect(self.dsn(), autocommit=True, connect_timeout=10)

    def create_database(self, name: str | None = None, tablespace: str | None = None) -> str:
        """A fresh database; returns its DSN."""
        from psycopg import sql

        name = name or f"afm_{secrets.token_hex(6)}"
        query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if tablespace:
            query = sql.SQL("{} TABLESPACE {}").format(query, sql.Identifier(tablespace))
        with self.admin() as conn:
            conn.execute(query)
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        from psycopg import sql

        with self.admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def set_file_size_limit(pid: int, limit: int | None, **run_as: Any) -> None:
    """Set (``None``: lift) the soft file-size limit of a running process with util-linux ``prlimit``, as
    the process's own user (``run_as``: ``subprocess`` user/group arguments): the hard limit is kept, so
    no privilege is needed, not even root's CAP_SYS_RESOURCE. A process that has ended is skipped."""
    soft = "unlimited" if limit is None else str(limit)
    done = subprocess.run(["prlimit", f"--pid={pid}", f"--fsize={soft}:"], capture_output=True, text=True, **run_as)
    if done.returncode != 0 and _pid_alive(pid):
        raise ClusterError(f"prlimit --pid {pid} failed: {done.stderr.strip()}")


def clean_stale(parent: Path | None = None) -> list[Path]:
    """Stop and delete the clusters of earlier runs (``afm-pg-*`` folders) whose owner process is gone."""
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(STALE_PREFIX + "*"):
        try:
            cluster = PgCluster.load(folder)
        except (OSError, ValueError, TypeError):
            continue
        if cluster.owner_pid is not None and not _pid_alive(cluster.owner_pid):
            cluster.destroy()
            removed.append(folder)
    return removed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["start", "dsn", "stop"])
    ap.add_argument("dir", type=Path)
    args = ap.parse_args()
    try:
        if args.action == "start":
            print(PgCluster.create(args.dir).dsn())
        elif args.action == "dsn":
            print(PgCluster.load(args.dir).dsn())
        else:
            PgCluster.load(args.dir).destroy()
    except (ClusterError, OSError) as exc:
        print(f"pgcluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
