"""Real ``afm-local serve`` processes (``python -m afm_local serve``) on free loopback ports, and what
the server tests read back from them."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from scripts.pgcluster import log_tail
from tests import THREAD_ENV

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NetworkUsed(AssertionError):
    pass


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

    def start(self, timeout: float = 120.0) -> ServerProcess:
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
        return log_tail(self.log_path, 6000)

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


def server_factory(directory: Path) -> tuple[Callable[..., ServerProcess], list[ServerProcess]]:
    started: list[ServerProcess] = []

    def spawn(
        *args: str, env: dict[str, str] | None = None, timeout: float = 120.0, name: str = "server"
    ) -> ServerProcess:
        server = ServerProcess(list(args), directory / f"{name}-{len(started)}.log", env=env)
        started.append(server)
        return server.start(timeout=timeout)

    return spawn, started


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus text exposition (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = ",".join(sorted(p for p in (m.group(2) or "{}")[1:-1].split(",") if p))
        if got == want:
            return float(m.group(3))
    return 0.0


def create_key(db: str, tenant: str, env: dict[str, str] | None = None, *extra: str) -> str:
    """A tenant's key, made with the real command line (``afm-local keys create``)."""
    done = subprocess.run(
        [sys.executable, "-m", "afm_local", "keys", "create", "--tenant", tenant, "--db", db, *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def proxy_server(
    spawn: Callable[..., ServerProcess], upstream_url: str, db: Path, key: str, name: str
) -> ServerProcess:
    """A server in front of ``upstream_url`` with ``key`` as its one key (through ``--api-key-env``)."""
    variable = "AFM_" + name.upper().replace("-", "_") + "_KEY"
    return spawn(
        "--db",
        str(db),
        "--upstream",
        upstream_url,
        "--api-key-env",
        variable,
        "--no-abstractive",
        env={variable: key},
        name=name,
    )
