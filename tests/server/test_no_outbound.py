"""No byte leaves the machine, checked from outside Python: the CLI and a real server run under
``strace -f -e trace=network``, which sees every socket call of every thread and of native code
(onnxruntime, tokenizers, llama.cpp) alike, not only Python's ``socket`` module.

The rule read from the trace: an Internet socket only ever binds, connects or sends to a loopback
address (the server's own listener and its loopback clients), nothing talks to port 53 (no name lookup,
even through a local resolver), and onnxruntime leaves no telemetry queue in the home folder.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests import THREAD_ENV
from tests.support.real import FIX, installed
from tests.support.servers import REPO, free_port

STRACE = shutil.which("strace")
NETWORK_CALLS = ("connect", "sendto", "sendmsg", "sendmmsg", "bind")
ADDRESS = re.compile(r'(?:inet_addr|inet_pton\(AF_INET6?,)\s*\(?"([^"]+)"')
PORT = re.compile(r"sin6?_port=htons\((\d+)\)")


def _strace_works() -> str | None:
    """Why strace cannot be used here, or ``None`` (a container may forbid ptrace)."""
    if STRACE is None:
        return "strace is not installed (scripts/test.sh installs Debian's strace as root)"
    done = subprocess.run([STRACE, "-f", "-e", "trace=network", "-o", os.devnull, "true"], capture_output=True)
    if done.returncode != 0:
        return f"strace cannot trace here: {done.stderr.decode(errors='replace').strip()[:200]}"
    return None


pytestmark = [
    pytest.mark.skipif(_strace_works() is not None, reason=str(_strace_works())),
    pytest.mark.skipif(not installed("multilingual-e5-small"), reason=f"models not installed; run `{FIX}`"),
]


def offending(trace: str) -> list[str]:
    """The traced network calls that reach beyond this machine: an Internet address that is not loopback,
    or port 53 anywhere."""
    bad = []
    for line in trace.splitlines():
        call = re.search(r"\b(\w+)\(", line.split(" ", 1)[-1])
        if call is None or call.group(1) not in NETWORK_CALLS:
            continue
        if "AF_INET" not in line:  # AF_UNIX / AF_NETLINK: on this machine by definition
            continue
        port = PORT.search(line)
        if port is not None and port.group(1) == "53":
            bad.append(line)
            continue
        for address in ADDRESS.findall(line):
            ip = ipaddress.ip_address(address)
            if not (ip.is_loopback or ip.is_unspecified or (call.group(1) == "bind" and ip.is_unspecified)):
                bad.append(line)
    return bad


def traced(trace_file: Path, *argv: str) -> list[str]:
    # every network call, and each program started (the proof that the trace follows the process at all)
    return [STRACE or "strace", "-f", "-qq", "-e", "trace=%network,execve", "-o", str(trace_file), *argv]


def env_for(home: Path) -> dict[str, str]:
    env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO), "HOME": str(home)}
    env.pop("ORT_DISABLE_TELEMETRY", None)  # afm-local must set it itself
    return env


def stop_traced(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the traced server (strace's child), so strace records its shutdown and exits with it."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        for pid in children.read_text().split():
            os.kill(int(pid), signal.SIGTERM)
        proc.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def test_the_rule_catches_what_it_must():
    """The parser is what the test stands on: a lookup, an outside connect and an outside send are caught,
    loopback and local sockets are not."""
    lines = [
        '12 connect(3, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("13.107.5.88")}, 16) = 0',
        '12 sendto(4, "x", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 1',
        "12 connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), "
        'inet_pton(AF_INET6, "2a01:111::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '12 connect(6, {sa_family=AF_INET, sin_port=htons(8765), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '12 bind(7, {sa_family=AF_INET, sin_port=htons(8765), sin_addr=inet_addr("127.0.0.1")}, 16) = 0',
        '12 connect(8, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0',
        "12 socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE) = 9",
    ]
    assert offending("\n".join(lines)) == lines[:3]


def test_the_trace_sees_a_connection_attempt_made_by_a_traced_process(tmp_path):
    """End to end, the way the tests below use it: an outside connect (to TEST-NET-1, never routed) is caught."""
    trace = tmp_path / "probe.trace"
    probe = "import socket; s = socket.socket(); s.settimeout(0.2); s.connect_ex(('192.0.2.1', 443))"
    subprocess.run(traced(trace, sys.executable, "-c", probe), env=env_for(tmp_path), capture_output=True, timeout=60)
    assert any("192.0.2.1" in line for line in offending(trace.read_text()))


def test_the_command_line_opens_no_outside_socket(tmp_path):
    trace = tmp_path / "cli.trace"
    done = subprocess.run(
        traced(
            trace,
            sys.executable,
            "-m",
            "afm_local",
            "pack",
            "examples/peanut_trip.json",
            "--query",
            "What should I eat in Kyoto?",
            "--budget",
            "500",
        ),
        cwd=REPO,
        env=env_for(tmp_path),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    text = trace.read_text()
    assert "execve(" in text and "afm_local" in text, "strace did not follow the command"
    assert offending(text) == []
    assert not (tmp_path / ".cache" / "Microsoft").exists(), "onnxruntime left a telemetry queue"


def test_a_serving_server_opens_no_socket_but_its_listener_and_loopback_peers(tmp_path):
    trace, port = tmp_path / "serve.trace", free_port()
    log = (tmp_path / "serve.log").open("wb")
    argv = [sys.executable, "-m", "afm_local", "serve", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        traced(trace, *argv, "--db", str(tmp_path / "s.db")),
        cwd=REPO,
        env=env_for(tmp_path),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            try:
                if httpx.get(url + "/healthz", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the traced server did not start"
            time.sleep(0.3)
        with httpx.Client(base_url=url, timeout=120, trust_env=False) as client:
            sid = client.post("/v1/sessions", json={}).json()["id"]
            for text in ("I am allergic to peanuts.", "We land in Kyoto on Friday.", "Find us a ramen place."):
                assert (
                    client.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text}).status_code
                    == 201
                )
            packed = client.post(
                f"/v1/sessions/{sid}/context", json={"query": "Where do we eat?", "budget_tokens": 300}
            )
            assert packed.status_code == 200, packed.text
            assert client.get("/metrics").status_code == 200
    finally:
        stop_traced(proc)
        log.close()
    text = trace.read_text()
    assert f"htons({port})" in text, "the trace does not show the listener: strace saw nothing"
    assert offending(text) == []
    assert not (tmp_path / ".cache" / "Microsoft").exists(), "onnxruntime left a telemetry queue"


def test_importing_afm_local_turns_onnxruntime_telemetry_off(tmp_path):
    script = (
        "import os, sys\n"
        "import afm_local\n"
        "assert 'onnxruntime' not in sys.modules\n"
        "from afm_local.local.onnx import onnxruntime\n"
        "onnxruntime()\n"
        "print(os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env_for(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
