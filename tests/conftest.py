"""Shared test fixtures: free loopback ports and real server processes (``python -m afm_local serve``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scripts.pgcluster import PgCluster  # noqa: E402  (needs REPO on the path)
from stores import new_cluster  # noqa: E402

# Every native library in a child process runs on one thread (the test machines have 2 noisy cores).
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "LLAMA_LOG_LEVEL": "error",
}
for _k, _v in THREAD_ENV.items():
    os.environ.setdefault(_k, _v)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NetworkUsed(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connection and name lookup raises ``NetworkUsed``."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise NetworkUsed(f"network access attempted: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


class ServerProcess:
    """One ``python -m afm_local serve`` child on a free 127.0.0.1 port, its output in ``log_path``."""

    def __init__(self, args: list[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        self.args, self.log_path = list(args), log_path
        self.env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO), **(env or {})}
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> "ServerProcess":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        cmd = [sys.executable, "-m", "afm_local", "serve", "--host", "127.0.0.1", "--port", str(self.port), *self.args]
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2.0, trust_env=False).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not become healthy in {timeout} s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def children(self) -> list[int]:
        """The worker processes of ``--workers N``: children of the server process started by
        multiprocessing's spawn (not its resource tracker)."""
        if not self.alive():
            return []
        assert self.proc is not None
        try:
            pids = [int(p) for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]
        except OSError:
            return []
        return [pid for pid in pids if b"spawn_main" in _read(f"/proc/{pid}/cmdline")]

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, exactly like a crash."""
        if self.alive():
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM (a supervisor stops and waits for its workers); if that hangs, SIGKILL the server and
        then the workers it had, each only while it is still the same process (same start time)."""
        if self.alive():
            assert self.proc is not None
            workers = {pid: _start_time(pid) for pid in self.children()}
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
                for pid, started in workers.items():
                    if started is not None and _start_time(pid) == started:
                        os.kill(pid, signal.SIGKILL)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def _start_time(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/PID/stat): with the pid, it names one process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _factory(directory: Path) -> tuple[Callable[..., ServerProcess], list[ServerProcess]]:
    started: list[ServerProcess] = []

    def spawn(*args: str, env: dict[str, str] | None = None, timeout: float = 120.0, name: str = "server") -> ServerProcess:
        server = ServerProcess(list(args), directory / f"{name}-{len(started)}.log", env=env)
        started.append(server)
        return server.start(timeout=timeout)

    return spawn, started


@pytest.fixture
def spawn_server(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """``spawn_server(*cli_args, env=..., name=...)`` starts a server; every one is stopped afterwards."""
    spawn, started = _factory(tmp_path)
    yield spawn
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def spawn_module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., ServerProcess]]:
    """Like ``spawn_server`` but shared by a whole test module (servers take seconds to start)."""
    spawn, started = _factory(tmp_path_factory.mktemp("servers"))
    yield spawn
    for server in started:
        server.stop()


# -- the real token counter, embedder and guard, each skipped (with the command that fixes it) when its
#    model file is not installed --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def counter():
    from real import FIX, installed

    if not installed("tiktoken"):
        pytest.skip(f"tiktoken vocabulary not installed; run `{FIX}`")
    from afm_local.local.tokens import TiktokenCounter

    return TiktokenCounter()


@pytest.fixture(scope="session")
def embedder():
    from real import FIX, installed

    if not installed("embedder"):
        pytest.skip(f"MiniLM embedder not installed; run `{FIX}`")
    from afm_local.local.embedding import OnnxEmbedder

    return OnnxEmbedder(threads=1)


@pytest.fixture(scope="session")
def guard(embedder, counter):
    from afm_local.text.guard import SummaryGuard

    return SummaryGuard(embedder, counter)


# ------------------------------------------------------------------------------------------ stores


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One private PostgreSQL cluster for the whole test session (skipped, with the reason, only when
    PostgreSQL is not installed)."""
    cluster = new_cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_db(pg_cluster: PgCluster) -> Iterator[str]:
    """The URL of a fresh database, dropped after the test."""
    dsn = pg_cluster.create_database()
    yield dsn
    pg_cluster.drop_database(dsn.rsplit("/", 1)[1])


@pytest.fixture(params=["sqlite", "postgresql"])
def store_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """``--db`` for a fresh store: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return str(request.getfixturevalue("pg_db"))
