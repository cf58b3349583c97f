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

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, exactly like a crash."""
        if self.alive():
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


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
