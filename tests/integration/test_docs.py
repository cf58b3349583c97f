"""Every code block in the docs runs as written: the ```python and ```bash (and ```sh) blocks of README.md and
docs/*.md are extracted and run.

* **Python blocks** of one file run top to bottom in one interpreter (a child process, PYTHONPATH set to
  the repository, one thread per library), as a reader runs a page: a later block may use what an earlier
  block of the same file imported or defined. Each block is its own test, and passes when it raises
  nothing. Blocks that call a model reach a real loopback stack: the upstream test server
  (``tests.support.upstream``, which checks every request against its API's rules and answers as a
  scripted model) as ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` (key ``OPENAI_API_KEY=unused``), and a
  real ``afm-local serve --api-key-env AFM_KEY --upstream <upstream> --anthropic-upstream <upstream>``
  in place of the docs' ``http://127.0.0.1:8765`` (it runs on a free port; the address is the one thing
  replaced in a block), its key in ``AFM_KEY``. The files a block opens by name (``agreement.pdf``,
  ``pricing.png``) are copies of the media fixtures in the block's working folder. Every request the
  upstream received must be valid.
* **Bash blocks** run with ``bash -euo pipefail`` in the repository root, ``afm-local`` on the PATH; those
  that install, serve, or are a synopsis are skipped, each for the reason in ``SKIP``.

``GIVEN`` is the one other setup: a block whose file cannot define what its prose names gets those names,
with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import THREAD_ENV
from tests.support.servers import ServerProcess
from tests.support.upstream import Upstream

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(python|bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
DOCS_ADDRESS = "http://127.0.0.1:8765"
AFM_KEY = "afm-docs-test-key-0123456789abcdef"
MEDIA = REPO / "tests" / "fixtures" / "media"
FILES = {"agreement.pdf": MEDIA / "pdf" / "agreement_en.pdf", "pricing.png": MEDIA / "png" / "pricing_en.png"}

# Blocks that are not run: (file, the start of the block's first line) -> why.
SKIP: dict[tuple[str, str], str] = {
    ("README.md", "scripts/quickstart.sh"): "installs: a .venv, the runtime packages and the models",
    ("README.md", "afm-local pack HISTORY.json --query TEXT"): "the command line's synopsis ([--flag A|B]), a grammar, "
    "not a command; `afm-local pack` and `afm-local classify` run from docs/integrations.md",
    ("README.md", "AFM_KEY=$(openssl rand -hex 24) afm-local serve"): "serves until stopped; this test starts the "
    "same server itself for the Python blocks",
    ("README.md", "scripts/test.sh                    #"): "installs the dev set-up and runs the whole test suite, "
    "this test included",
    ("docs/integrations.md", "AFM_KEY=$(openssl rand -hex 24) afm-local serve"): "serves until stopped, upstream "
    "api.openai.com; this test starts it with the loopback upstream instead",
    ("docs/peers.md", ".venv/bin/pip install"): "installs packages, then a benchmark of minutes",
    ("docs/server.md", "afm-local serve"): "serves until stopped (and names a PostgreSQL host)",
    ("docs/server.md", "createdb afm"): "needs a PostgreSQL server, then serves",
    ("docs/server.md", "afm-local keys create"): "its third line is a synopsis ([--key-id ID]); the keys commands "
    "are tested in tests/server",
    ("docs/server.md", "scripts/test.sh tests/server"): "installs and runs test suites and a benchmark",
}

# Names a block uses that its own file does not define, given before the block runs: (file, start of the
# block's first line) -> (code, why).
GIVEN: dict[tuple[str, str], tuple[str, str]] = {}


def corpora_present() -> bool:
    """Whether the third-party corpora are where the benchmarks look for them (scripts.corpora.corpora_dir)."""
    from scripts.corpora import corpora_dir

    try:
        corpora_dir()
    except SystemExit:
        return False
    return True


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository
    line: int  # of the opening fence
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    def matches(self, table: dict) -> tuple | str | None:
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        for (path, start), value in table.items():
            if path == self.path and first.startswith(start):
                return value
        return None


def doc_blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            lang = "bash" if m.group(1) == "sh" else m.group(1)
            found.append(Block(doc.relative_to(REPO).as_posix(), text.count("\n", 0, m.start()) + 1, lang, m.group(2)))
    return found


BLOCKS = doc_blocks()
PYTHON = [b for b in BLOCKS if b.lang == "python"]
BASH = [b for b in BLOCKS if b.lang == "bash"]

# Runs the blocks of one file in one namespace, in order; writes each block's outcome as JSON lines.
DRIVER = r"""
import json, sys, traceback
blocks, out = json.load(open(sys.argv[1])), open(sys.argv[2], "w")
namespace = {"__name__": "__main__"}
for block in blocks:
    print(f"===== {block['id']}", flush=True)
    try:
        if block["given"]:
            exec(compile(block["given"], block["id"] + " (given)", "exec"), namespace)
        exec(compile(block["code"], block["id"], "exec"), namespace)
        out.write(json.dumps({"id": block["id"], "error": None}) + "\n")
    except BaseException:
        out.write(json.dumps({"id": block["id"], "error": traceback.format_exc()}) + "\n")
    out.flush()
"""


def block_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        **THREAD_ENV,
        "AFM_THREADS": "1",
        "PYTHONPATH": str(REPO),
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        **(extra or {}),
    }


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    """The loopback upstream and an ``afm-local serve`` in front of it, started when a block needs them."""
    started: dict[str, object] = {}

    def get() -> tuple[Upstream, ServerProcess]:
        if not started:
            upstream = Upstream().start()
            started["upstream"] = upstream
            folder = tmp_path_factory.mktemp("docs-server")
            server = ServerProcess(
                [
                    "--api-key-env",
                    "AFM_KEY",
                    "--upstream",
                    upstream.url,
                    "--anthropic-upstream",
                    upstream.url,
                    "--db",
                    str(folder / "afm-local.db"),
                ],
                folder / "server.log",
                env={"AFM_KEY": AFM_KEY},
            )
            started["server"] = server.start(timeout=180)
        return started["upstream"], started["server"]  # type: ignore[return-value]

    yield get
    if "server" in started:
        started["server"].stop()  # type: ignore[attr-defined]
    if "upstream" in started:
        started["upstream"].stop()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def sessions(stack, tmp_path_factory: pytest.TempPathFactory):
    """``sessions(path)``: each Python block of the file's outcome (``None`` or its traceback), the run's
    output, and the requests the upstream rejected during it; run once per file."""
    done: dict[str, tuple[dict[str, str | None], str, list]] = {}

    def run(path: str):
        if path in done:
            return done[path]
        blocks = [b for b in PYTHON if b.path == path]
        needs_stack = any(DOCS_ADDRESS in b.code or "OpenAI(" in b.code or "OpenAILike(" in b.code for b in blocks)
        env: dict[str, str] = {}
        address = DOCS_ADDRESS
        upstream = None
        if needs_stack:
            upstream, server = stack()
            address = server.url
            env = {
                "AFM_KEY": AFM_KEY,
                "OPENAI_API_KEY": "unused",
                "OPENAI_BASE_URL": upstream.url + "/v1",
                "OPENAI_API_BASE": upstream.url + "/v1",
            }
        folder = tmp_path_factory.mktemp("docs-" + Path(path).stem)
        for name, source in FILES.items():
            shutil.copyfile(source, folder / name)
        payload = [
            {"id": b.id, "code": b.code.replace(DOCS_ADDRESS, address), "given": (b.matches(GIVEN) or ("", ""))[0]}
            for b in blocks
        ]  # type: ignore[index]
        (folder / "blocks.json").write_text(json.dumps(payload), encoding="utf-8")
        (folder / "driver.py").write_text(DRIVER, encoding="utf-8")
        before = len(upstream.requests) if upstream else 0
        proc = subprocess.run(
            [sys.executable, str(folder / "driver.py"), str(folder / "blocks.json"), str(folder / "outcomes.jsonl")],
            cwd=folder,
            env=block_env(env),
            capture_output=True,
            text=True,
            timeout=1200,
        )
        outcomes = {}
        if (folder / "outcomes.jsonl").is_file():
            for line in (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                outcomes[row["id"]] = row["error"]
        rejected = [r.violations for r in upstream.requests[before:] if r.violations] if upstream else []
        done[path] = (outcomes, (proc.stdout + proc.stderr)[-6000:], rejected)
        return done[path]

    return run


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_python_block_runs(block: Block, sessions) -> None:
    if reason := block.matches(SKIP):
        pytest.skip(str(reason))
    outcomes, output, rejected = sessions(block.path)
    assert block.id in outcomes, f"{block.id} did not run (an earlier block ended the interpreter?):\n{output}"
    assert outcomes[block.id] is None, f"{block.id} failed:\n{outcomes[block.id]}\n--- output ---\n{output}"
    assert rejected == [], f"the upstream rejected requests sent by {block.path}'s blocks: {rejected}"


@pytest.mark.parametrize("block", BASH, ids=lambda b: b.id)
def test_bash_block_runs(block: Block) -> None:
    if reason := block.matches(SKIP):
        pytest.skip(str(reason))
    if "scripts.bench_" in block.code and not corpora_present():
        pytest.skip("a benchmark over the third-party corpora, which are not beside this checkout (AFM_CORPORA)")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=REPO,
        env=block_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{block.id} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{block.id} printed nothing"


def test_every_block_is_run_or_skipped_for_a_reason() -> None:
    """The skip and given tables name blocks that exist (a renamed block must not keep a stale entry), and a
    page's blocks are all found: python and bash in README and docs/integrations.md at least."""
    for table in (SKIP, GIVEN):
        for path, start in table:
            assert any(b.path == path and b.code.lstrip().startswith(start) for b in BLOCKS), (path, start)
    run = [b for b in BLOCKS if not b.matches(SKIP)]
    assert {b.path for b in run if b.lang == "python"} >= {"README.md", "docs/integrations.md"}
    assert any(b.lang == "bash" for b in run)
