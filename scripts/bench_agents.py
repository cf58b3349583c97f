"""Agent trajectories: do the earlier tool outputs that the agent's next action uses reach the model?

    .venv/bin/python -m scripts.bench_agents [--suite tau|coding|all] [--limit N] [--steps-every K]
        [--trajectories N] [--seed S] [--out agents]

Two suites of agent histories, each read or made at run time from third-party text outside the repository
(never copied into it):

* ``tau``: the 100 τ-bench airline conversations of ``../shared/corpora/tau_airline_dev.jsonl``
  (sierra-research/tau-bench, MIT; gpt-4o as the agent with a simulated user): a long policy (system), user
  turns, assistant tool calls and JSON tool results. Budgets 2,000 / 3,000 / 4,000 tokens.
* ``coding``: the coding-agent shape, one instruction then 30 to 200 tool calls with long outputs. No
  package on the index ships real public coding-agent trajectories with a licence that allows this use
  (the trajectory tools there fetch their data sets from a hub at run time), so the trajectories are made
  here, seeded, from **real third-party text on disk**: the Python standard library's sources (PSF licence)
  as ``read_file`` results (``cat -n`` windows), ``grep -n`` over them as ``grep`` results, and the real
  output of real commands (``python -m unittest -v test.test_X``, ``python -m pip list``) as ``run``
  results. The instruction and the ``edit_file`` replacements are ours. Every next action uses something
  from an earlier output: a path, a line number, a function name, a line it edits. Budgets 8k / 16k / 32k.

At each later step t (each assistant message after the first two), the request is every message before t,
as OpenAI chat messages. Strategies, side by side, each producing the chat messages sent within the budget:

* ``afm``: ``afm_local.integrations.packing.pack_turns`` on a fresh ``local_manager(AFMConfig())`` over one
  shared artifact cache: the whole request, the current tool loop after the query included, packed into the
  budget; ``BudgetTooSmall`` is a refusal;
* ``clear_tool_uses``: Anthropic's context editing ``clear_tool_uses_20250919`` (trigger = the budget, keep
  the last 3 tool results, each older result replaced by a placeholder line), then, if still over, whole
  units dropped oldest first (never the system message or the instruction), then the largest remaining
  content cut to fit;
* ``recency``: system and instruction kept, then the newest units (a call with its results) that fit;
* ``topk``: system and instruction kept, then units by cosine between the unit and the instruction plus the
  last assistant message (the engine's embedder, the query embedded as a query), best first, while they
  fit, sent in order;
* ``summary``: a LangChain ``SummarizationMiddleware`` stand-in: the newest units kept whole within 75 % of
  the budget, the older ones replaced by one user message holding an extractive summary (the engine's
  extractive compressor over each older message, newest first) within the rest.

Measured per strategy and budget: budget held (share of steps whose request counts ≤ the budget, and ≤ the
budget + 1 %, by an independent OpenAI-cookbook count: tiktoken o200k_base from the project's offline
vocabulary, 3 tokens a message plus its role, content and name, each tool call's name and arguments, and 3
for the reply), mean tokens / budget, refusals, and **grounding recall**: the values the agent's next
action uses that came from earlier tool outputs (argument values of the next tool call: strings ≥ 3
characters, numbers of ≥ 3 digits; for τ also the values of earlier tool results quoted in the next
assistant text) and that the system, instruction and user text do not contain; recall is the share of
them whose exact string is in the text the strategy sends. Writes docs/benchmarks/<out>.md,
<out>_results.json and <out>_recall.png.
"""

from __future__ import annotations

import argparse
import builtins
import hashlib
import json
import keyword
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scripts.corpora import corpora_dir

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "docs" / "benchmarks"
TAU_NAME = "tau_airline_dev.jsonl"  # in the corpora folder (scripts.corpora.corpora_dir)
CACHE_DIR = Path(os.environ.get("AFM_BENCH_CACHE", Path.home() / ".cache" / "afm-local" / "bench_agents"))
BUDGETS = {"tau": [2000, 3000, 4000], "coding": [8000, 16000, 32000]}
STRATEGIES = ["afm", "clear_tool_uses", "recency", "topk", "summary"]
FIRST_STEPS = 2  # the first assistant actions of a history are not measured (nothing to pack yet)
KEEP_TOOL_RESULTS = 3  # clear_tool_uses_20250919's default "keep"
CLEARED = "[tool result cleared]"
SUMMARY_SHARE = 0.25
SUMMARY_HEAD = "Here is a summary of the conversation to date:\n\n"
OUTPUT_CHARS = 16_000  # a tool's output is cut here, as agent harnesses cut long observations
Message = dict[str, Any]


# -- the independent count (OpenAI cookbook) ----------------------------------------------------------------


class CookbookCount:
    """``num_tokens_from_messages`` of the OpenAI cookbook for gpt-4o-class models, with tiktoken's own
    ``o200k_base`` loaded from the project's offline copy (``models/tiktoken``, the files named as tiktoken
    names its cache entries, so ``TIKTOKEN_CACHE_DIR`` serves them): 3 tokens a message, the tokens of its
    role, content and name, of each tool call's name and arguments, and 3 for the reply's priming. It shares
    no code with ``afm_local``'s counter."""

    def __init__(self) -> None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / "models" / "tiktoken"))
        import tiktoken

        self._enc = tiktoken.get_encoding("o200k_base")
        self._memo: dict[str, int] = {}

    def text(self, text: str) -> int:
        found = self._memo.get(text)
        if found is None:
            found = len(self._enc.encode(text, disallowed_special=()))
            if len(self._memo) < 400_000:
                self._memo[text] = found
        return found

    def message(self, m: Message) -> int:
        n = 3 + self.text(m["role"])
        if isinstance(m.get("content"), str):
            n += self.text(m["content"])
        if m.get("name"):
            n += self.text(m["name"])
        for call in m.get("tool_calls") or ():
            n += self.text(call["function"]["name"]) + self.text(call["function"]["arguments"])
        return n

    def request(self, messages: list[Message]) -> int:
        return sum(self.message(m) for m in messages) + 3


# -- histories ----------------------------------------------------------------------------------------------


@dataclass
class Trajectory:
    suite: str
    id: str
    messages: list[Message]


def tau_trajectories(limit: int | None) -> list[Trajectory]:
    tau_file = corpora_dir() / TAU_NAME
    rows = [json.loads(line) for line in tau_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:limit] if limit else rows
    return [Trajectory("tau", f"task{r['task_id']}-trial{r['trial']}", r["messages"]) for r in rows]


CODING_SYSTEM = (
    "You are a coding agent working in a checkout of a Python code base (the current directory). Tools: "
    "grep(pattern, path) prints matching lines as path:line:text; read_file(path, line, window) prints "
    "window lines from line on, numbered; run(command) runs a shell command and prints its output; "
    "edit_file(path, line, old, new) replaces the text old on that line. Read before you edit, and run "
    "the tests after a change."
)
SLOW_TESTS = {  # packages whose test suites run for minutes, start servers or processes: no trajectory's target
    "asyncio",
    "concurrent",
    "multiprocessing",
    "subprocess",
    "socket",
    "socketserver",
    "ssl",
    "venv",
    "threading",
    "selectors",
    "signal",
    "pydoc",
    "zipfile",
    "tarfile",
    "shutil",
    "urllib",
    "http",
    "xmlrpc",
    "ftplib",
    "smtplib",
    "imaplib",
    "poplib",
    "nntplib",
    "telnetlib",
    "sqlite3",
    "tempfile",
    "os",
    "pathlib",
    "compileall",
    "zipimport",
}
SKIP_DIRS = {
    "test",
    "idlelib",
    "lib2to3",
    "site-packages",
    "__pycache__",
    "ensurepip",
    "tkinter",
    "turtledemo",
    "pydoc_data",
    "config-3.11-x86_64-linux-gnu",
    "distutils",
}
BUILTIN_NAMES = set(dir(builtins))
DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
CALL = re.compile(r"(?<![\w.])(?:self\.|cls\.)?([A-Za-z_]\w{3,})\(")
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))")
GREP_LINE = re.compile(r"^([\w./-]+\.py):(\d+):(.*)$")
READ_LINE = re.compile(r"^\s*(\d+)\t(.*)$")
TEST_NAME = re.compile(r"^(test_\w+) \(([\w.]+)\.(\w+)\.test_\w+\)")
TRACE = re.compile(r'File "([^"]+\.py)", line (\d+)')


class StdlibTree:
    """The standard library's sources as the checkout the agent works in (paths relative to its root)."""

    def __init__(self) -> None:
        self.root = Path(sysconfig.get_paths()["stdlib"])
        self._lines: dict[str, list[str]] = {}
        files = []
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.root)
            if rel.parts[0] in SKIP_DIRS or any(p.startswith(".") for p in rel.parts):
                continue
            files.append(rel.as_posix())
        self.files = files

    def lines(self, rel: str) -> list[str]:
        if rel not in self._lines:
            self._lines[rel] = (self.root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        return self._lines[rel]

    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def under(self, folder: str) -> list[str]:
        if folder.endswith(".py"):
            return [folder] if self.exists(folder) else []
        prefix = folder.rstrip("/") + "/"
        if folder in ("", "."):
            prefix = ""
        found = [f for f in self.files if f.startswith(prefix)]
        test = self.root / folder
        if folder.startswith("test") and test.is_dir():
            found = sorted(p.relative_to(self.root).as_posix() for p in test.rglob("*.py"))
        return found

    def grep(self, pattern: str, folder: str, cap: int = 60) -> str:
        """``grep -rn -F -w PATTERN FOLDER`` (files in sorted order), the first ``cap`` hits."""
        word = re.compile(r"(?<!\w)" + re.escape(pattern) + r"(?!\w)")
        hits = []
        for rel in self.under(folder):
            for i, line in enumerate(self.lines(rel), 1):
                if word.search(line):
                    hits.append(f"{rel}:{i}:{line}")
        if not hits:
            return ""
        more = f"\n[{len(hits) - cap} more matches not shown]" if len(hits) > cap else ""
        return clip("\n".join(hits[:cap]) + more)

    def read(self, rel: str, line: int, window: int) -> str:
        """``cat -n`` of ``window`` lines from ``line`` on."""
        lines = self.lines(rel)
        start = max(1, min(line, len(lines)))
        return clip("\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(start, min(len(lines), start + window - 1) + 1)))

    def test_module(self, rel: str) -> str | None:
        top = rel.split("/")[0].removesuffix(".py").lstrip("_")
        for name in (f"test_{top}", f"test_{top.rstrip('s')}"):
            if (self.root / "test" / f"{name}.py").is_file() or (self.root / "test" / name / "__init__.py").is_file():
                return f"test.{name}"
        return None


def clip(text: str) -> str:
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "\n[output truncated]"


def run_command(command: str) -> str:
    """The real output of ``command`` (``python`` is this interpreter), run once and kept in the cache folder
    outside the repository, so a trajectory is the same on the next run (the tests' timings would differ).
    ``python`` is the base interpreter whose standard library the trajectories read (not a virtual
    environment's), so ``pip list`` and the tests are the same whichever environment runs the benchmark."""
    python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    key = hashlib.sha256(f"{python}\n{sys.version}\n{command}".encode()).hexdigest()[:20]
    cached = CACHE_DIR / f"run-{key}.txt"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    argv = command.split()
    if argv[0] == "python":
        argv[0] = str(python)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "COLUMNS": "100"}
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env=env, cwd=sysconfig.get_paths()["stdlib"]
        )
        out = (done.stdout + done.stderr).strip() or f"(exit status {done.returncode}, no output)"
    except subprocess.TimeoutExpired:
        out = "[timed out after 120 s]"
    out = clip(out)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cached.write_text(out, encoding="utf-8")
    return out


@dataclass
class Fact:
    kind: str  # "loc" (path, line), "ident" (name), "text" (path, line, text), "test" (module)
    value: tuple


@dataclass
class Walk:
    tree: StdlibTree
    rng: random.Random
    messages: list[Message] = field(default_factory=list)
    outputs: list[list[Fact]] = field(default_factory=list)  # the facts of each tool output, in order
    calls: int = 0

    def act(self, name: str, args: dict[str, Any], output: str, facts: list[Fact]) -> None:
        self.calls += 1
        call_id = f"call_{self.calls:03d}"
        arguments = json.dumps(args, ensure_ascii=False)
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
            }
        )
        self.messages.append(
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": output or "(no output)"}
        )
        self.outputs.append(facts)


def facts_of(tree: StdlibTree, name: str, output: str, path: str | None = None) -> list[Fact]:
    """What a later action can take from an output: locations, identifiers, lines, test modules."""
    facts: list[Fact] = []
    for line in output.splitlines():
        if name == "grep" and (m := GREP_LINE.match(line)):
            facts.append(Fact("loc", (m.group(1), int(m.group(2)))))
            facts += [Fact("ident", (i,)) for i in idents(m.group(3))]
        elif name == "read_file" and path and (m := READ_LINE.match(line)):
            number, text = int(m.group(1)), m.group(2)
            facts += [Fact("ident", (i,)) for i in idents(text)]
            if len(text.strip()) >= 24 and not text.strip().startswith("#"):
                facts.append(Fact("text", (path, number, text.strip())))
            if d := DEF.match(text):
                facts.append(Fact("ident", (d.group(1),)))
            if (imp := IMPORT.match(text)) and (mod := imp.group(1) or imp.group(2)):
                rel = mod.replace(".", "/")
                for cand in (f"{rel}.py", f"{rel}/__init__.py"):
                    if tree.exists(cand) and cand in tree.files:
                        facts.append(Fact("loc", (cand, 1)))
        elif name == "run":
            if m := TEST_NAME.match(line):
                facts.append(Fact("ident", (m.group(1),)))
                facts.append(Fact("test", (m.group(2),)))
            for path_, number in TRACE.findall(line):
                rel = path_.split("/python3.11/")[-1]
                if tree.exists(rel) and not rel.startswith("unittest/"):
                    facts.append(Fact("loc", (rel, int(number))))
    return facts


def idents(text: str) -> list[str]:
    return [n for n in CALL.findall(text) if n not in BUILTIN_NAMES and not keyword.iskeyword(n) and "__" not in n]


def coding_trajectories(count: int, seed: int) -> list[Trajectory]:
    tree = StdlibTree()
    rng = random.Random(seed)
    pip_list = run_command("python -m pip list")
    targets = [
        f
        for f in tree.files
        if 300 <= len(tree.lines(f)) <= 4000
        and tree.test_module(f)
        and f.split("/")[0].removesuffix(".py") not in SLOW_TESTS
    ]
    out = []
    lengths = [30, 60, 90, 120, 160, 200]
    while len(out) < count:
        rel = rng.choice(targets)
        defs = [
            (i, m.group(1))
            for i, line in enumerate(tree.lines(rel), 1)
            if (m := re.match(r"def ([a-z]\w{4,})\(", line)) and not m.group(1).startswith("_")
        ]
        if not defs:
            continue
        _, func = rng.choice(defs)
        n_calls = lengths[len(out) % len(lengths)]
        folder = rel.split("/")[0] if "/" in rel else rel
        walk = Walk(tree, random.Random(rng.random()))
        instruction = (
            f"`{func}` misbehaves when it is given an empty input: it should return early instead. Find where "
            f"`{func}` is defined, read how its callers use it, make the change, and run the module's tests "
            "before and after. Keep the change small."
        )
        walk.messages = [{"role": "system", "content": CODING_SYSTEM}, {"role": "user", "content": instruction}]
        walk.act("run", {"command": "python -m pip list"}, pip_list, [])
        hits = tree.grep(f"def {func}", folder)
        if not hits:
            continue
        walk.act("grep", {"pattern": f"def {func}", "path": folder}, hits, facts_of(tree, "grep", hits))
        test = tree.test_module(rel)
        while walk.calls < n_calls:
            step(walk, test)
        out.append(Trajectory("coding", f"{rel}:{func}:{n_calls}", walk.messages))
    return out


def step(walk: Walk, test: str | None) -> None:
    """One next action, using a fact of an earlier output: most often (60 %) one of the last three, else an
    older one (any before those, drawn uniformly)."""
    rng, tree = walk.rng, walk.tree
    for _ in range(50):
        recent = rng.random() < 0.6 or len(walk.outputs) <= 3
        pool = walk.outputs[-3:] if recent else walk.outputs[:-3]
        facts = rng.choice(pool) if pool else []
        if not facts:
            continue
        fact = rng.choice(facts)
        if fact.kind == "loc":
            path, line = fact.value
            window = rng.choice([40, 60, 80])
            output = tree.read(path, line, window)
            if output:
                walk.act(
                    "read_file",
                    {"path": path, "line": line, "window": window},
                    output,
                    facts_of(tree, "read_file", output, path),
                )
                return
        elif fact.kind == "ident":
            (name,) = fact.value
            folders = {f.value[0].split("/")[0] for o in walk.outputs for f in o if f.kind == "loc"} - {"test"}
            folder = rng.choice(sorted(folders)) if folders else "."
            output = tree.grep(name, folder)
            if output:
                walk.act("grep", {"pattern": name, "path": folder}, output, facts_of(tree, "grep", output))
                return
        elif fact.kind == "text" and rng.random() < 0.4:
            path, line, text = fact.value
            new = text.replace("(", "(  ", 1) if "(" in text else text + "  # checked"
            walk.act(
                "edit_file",
                {"path": path, "line": line, "old": text, "new": new},
                f"Edited {path}: line {line} replaced (1 occurrence).",
                [Fact("loc", (path, max(1, line - 10)))],
            )
            if test and rng.random() < 0.5:
                output = run_command(f"python -m unittest -v {test}")
                walk.act("run", {"command": f"python -m unittest -v {test}"}, output, facts_of(tree, "run", output))
            return
        elif fact.kind == "test":
            (module,) = fact.value
            path = module.replace(".", "/") + ".py"
            if (tree.root / path).is_file():
                hits = tree.grep("def test_", path)
                walk.act("grep", {"pattern": "def test_", "path": path}, hits, facts_of(tree, "grep", hits))
                return
    if test:  # nothing usable drawn: the module's tests
        output = run_command(f"python -m unittest -v {test}")
        walk.act("run", {"command": f"python -m unittest -v {test}"}, output, facts_of(tree, "run", output))
    else:
        walk.act("run", {"command": "python -m pip list"}, run_command("python -m pip list"), [])


# -- the steps and their grounding values -------------------------------------------------------------------


@dataclass
class Step:
    trajectory: str
    index: int  # the assistant message the agent sends next; the request is messages[:index]
    values: list[str]
    fresh: list[str]  # those no earlier assistant message (text or call) contains: read, not yet used


def leaves(value: Any) -> Iterable[str]:
    """The atomic values of a JSON value: strings of ≥ 3 characters, numbers of ≥ 3 digits."""
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        text = str(value)
        if sum(c.isdigit() for c in text) >= 3:
            yield text
    elif isinstance(value, str) and len(value.strip()) >= 3:
        yield value.strip()


def result_values(text: str) -> set[str]:
    try:
        return set(leaves(json.loads(text)))
    except (ValueError, TypeError):
        return set()


def steps_of(trajectory: Trajectory, every: int) -> list[Step]:
    msgs = trajectory.messages
    steps, assistant_seen = [], 0
    for t, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        assistant_seen += 1
        if assistant_seen <= FIRST_STEPS or (assistant_seen - FIRST_STEPS - 1) % every:
            continue
        earlier_tools = [x["content"] for x in msgs[:t] if x["role"] == "tool" and isinstance(x["content"], str)]
        given = "\n".join(
            x["content"] for x in msgs[:t] if x["role"] in ("system", "user") and isinstance(x["content"], str)
        )
        tools_text = "\n".join(earlier_tools)
        wanted: list[str] = []
        for call in m.get("tool_calls") or ():
            try:
                wanted += list(leaves(json.loads(call["function"]["arguments"])))
            except ValueError:
                pass
        if trajectory.suite == "tau" and isinstance(m.get("content"), str) and m["content"]:
            quoted = set()
            for text in earlier_tools:
                quoted |= result_values(text)
            wanted += sorted(v for v in quoted if re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", m["content"]))
        values = sorted({v for v in wanted if v in tools_text and v not in given})
        used = sent_text([x for x in msgs[:t] if x["role"] == "assistant"])
        steps.append(Step(trajectory.id, t, values, [v for v in values if v not in used]))
    return steps


# -- strategies ---------------------------------------------------------------------------------------------


def units_of(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped so that an assistant message with tool calls and the tool messages after it are one."""
    out: list[list[Message]] = []
    for m in messages:
        if m["role"] == "tool" and out and (out[-1][0].get("tool_calls")):
            out[-1].append(m)
        else:
            out.append([m])
    return out


def head_of(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    """The kept head (the system message and the first user message, the instruction) and the rest."""
    head, rest = [], list(messages)
    if rest and rest[0]["role"] == "system":
        head.append(rest.pop(0))
    if rest and rest[0]["role"] == "user":
        head.append(rest.pop(0))
    return head, rest


def flatten(units: Iterable[list[Message]]) -> list[Message]:
    return [m for u in units for m in u]


def cut_to_fit(messages: list[Message], budget: int, count: CookbookCount) -> list[Message]:
    """Cut the longest content until the request fits (the last resort of the baselines; said in the docs)."""
    messages = [dict(m) for m in messages]
    for _ in range(len(messages) + 8):
        over = count.request(messages) - budget
        if over <= 0:
            break
        i = max(
            range(len(messages)),
            key=lambda k: (
                count.text(messages[k]["content"] or "") if isinstance(messages[k].get("content"), str) else 0
            ),
        )
        text = messages[i]["content"] or ""
        tokens = count._enc.encode(text, disallowed_special=())
        if not tokens:
            break
        keep = max(0, len(tokens) - over - 8)
        messages[i]["content"] = count._enc.decode(tokens[:keep]) + " [cut]"
    return messages


def recency(messages: list[Message], budget: int, env: Env) -> list[Message]:
    head, rest = head_of(messages)
    kept: list[list[Message]] = []
    used = env.count.request(head)
    for unit in reversed(units_of(rest)):
        cost = sum(env.count.message(m) for m in unit)
        if used + cost > budget:
            break
        kept.insert(0, unit)
        used += cost
    return cut_to_fit(head + flatten(kept), budget, env.count)


def clear_tool_uses(messages: list[Message], budget: int, env: Env) -> list[Message]:
    out = [dict(m) for m in messages]
    if env.count.request(out) <= budget:
        return out
    tools = [i for i, m in enumerate(out) if m["role"] == "tool"]
    for i in tools[: max(0, len(tools) - KEEP_TOOL_RESULTS)]:
        out[i]["content"] = CLEARED
    head, rest = head_of(out)
    units = units_of(rest)
    while len(units) > 1 and env.count.request(head + flatten(units)) > budget:
        units.pop(0)
    return cut_to_fit(head + flatten(units), budget, env.count)


def unit_text(unit: list[Message]) -> str:
    parts = []
    for m in unit:
        if isinstance(m.get("content"), str) and m["content"]:
            parts.append(m["content"])
        for c in m.get("tool_calls") or ():
            parts.append(f"{c['function']['name']}({c['function']['arguments']})")
    return "\n".join(parts)


def topk(messages: list[Message], budget: int, env: Env) -> list[Message]:
    head, rest = head_of(messages)
    units = units_of(rest)
    if not units:
        return cut_to_fit(head, budget, env.count)
    instruction = head[-1]["content"] if head and head[-1]["role"] == "user" else ""
    last = next((unit_text(u) for u in reversed(units) if u[0]["role"] == "assistant"), "")
    query = env.embed([f"{instruction}\n{last}"], "query")[0]
    vectors = env.embed([unit_text(u) for u in units], "passage")
    order = np.argsort(-(vectors @ query), kind="stable")
    used, chosen = env.count.request(head), set()
    for i in order:
        cost = sum(env.count.message(m) for m in units[i])
        if used + cost <= budget:
            chosen.add(int(i))
            used += cost
    return cut_to_fit(head + flatten(u for i, u in enumerate(units) if i in chosen), budget, env.count)


def summary(messages: list[Message], budget: int, env: Env) -> list[Message]:
    head, rest = head_of(messages)
    if env.count.request(messages) <= budget:
        return [dict(m) for m in messages]
    share = int(budget * SUMMARY_SHARE)
    units = units_of(rest)
    kept: list[list[Message]] = []
    used = env.count.request(head) + share
    while units:
        cost = sum(env.count.message(m) for m in units[-1])
        if used + cost > budget:
            break
        kept.insert(0, units.pop())
        used += cost
    lines: list[str] = []
    room = share - 3 - env.count.text("user") - env.count.text(SUMMARY_HEAD)
    for unit in reversed(units):  # the newest of the older units first
        line = env.summarise(unit)
        cost = env.count.text(line) + 1
        if cost > room:
            continue
        lines.insert(0, line)
        room -= cost
    block = [{"role": "user", "content": SUMMARY_HEAD + "\n".join(lines)}] if lines else []
    return cut_to_fit(head + block + flatten(kept), budget, env.count)


class Env:
    """What the strategies share: the count, the engine's components and caches."""

    def __init__(self) -> None:
        from afm_local import ArtifactCache
        from afm_local.local import local_components

        self.count = CookbookCount()
        self.components = local_components(threads=1)
        self.cache = ArtifactCache()
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self._summaries: dict[str, str] = {}

    def embed(self, texts: list[str], kind: str) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._vectors]
        if missing:
            for t, v in zip(missing, self.components.embedder.embed(missing, kind)):
                self._vectors[(kind, t)] = v
        return np.stack([self._vectors[(kind, t)] for t in texts])

    def summarise(self, unit: list[Message]) -> str:
        text = unit_text(unit)
        if text not in self._summaries:
            role = unit[0]["role"]
            short = self.components.compressor.compress(text[:4000], 0.2).text
            self._summaries[text] = f"- {role}: " + " ".join(short.split())
        return self._summaries[text]


def afm(messages: list[Message], budget: int, env: Env) -> list[Message]:
    from afm_local import AFMConfig, local_manager
    from afm_local.core.turns import as_turn
    from afm_local.integrations.packing import pack_turns

    turns = [as_turn(m) for m in messages]
    manager = local_manager(AFMConfig(), cache=env.cache)
    context, _, _ = pack_turns(turns, budget, manager)  # the whole request: the tool loop is packed too
    return list(context)


STRATEGY_FUNCS: dict[str, Callable[[list[Message], int, Env], list[Message]]] = {
    "afm": afm,
    "clear_tool_uses": clear_tool_uses,
    "recency": recency,
    "topk": topk,
    "summary": summary,
}


def sent_text(messages: list[Message]) -> str:
    parts = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
        for c in m.get("tool_calls") or ():
            parts.append(c["function"]["name"])
            parts.append(c["function"]["arguments"])
            try:
                parts += [str(v) for v in leaves(json.loads(c["function"]["arguments"]))]
            except ValueError:
                pass
    return "\n".join(parts)


# -- the run ------------------------------------------------------------------------------------------------


@dataclass
class Cell:
    steps: int = 0
    refusals: int = 0
    errors: int = 0
    held: int = 0
    held_1pct: int = 0
    ratios: list[float] = field(default_factory=list)
    wanted: int = 0
    found: int = 0
    fresh: int = 0
    fresh_found: int = 0
    seconds: float = 0.0

    def row(self) -> dict[str, Any]:
        sent = self.steps - self.refusals - self.errors
        return {
            "steps": self.steps,
            "refusals": self.refusals,
            "errors": self.errors,
            "recall": self.found / self.wanted if self.wanted else None,
            "values": self.wanted,
            "found": self.found,
            "recall_fresh": self.fresh_found / self.fresh if self.fresh else None,
            "fresh_values": self.fresh,
            "fresh_found": self.fresh_found,
            "budget_held": self.held / sent if sent else None,
            "budget_held_1pct": self.held_1pct / sent if sent else None,
            "tokens_per_budget": statistics.fmean(self.ratios) if self.ratios else None,
            "max_tokens_per_budget": max(self.ratios) if self.ratios else None,
            "ms_per_step": 1000 * self.seconds / self.steps if self.steps else None,
        }


def run_suite(name: str, trajectories: list[Trajectory], every: int, env: Env, log: Callable[[str], None]) -> dict:
    from afm_local import BudgetTooSmall

    cells = {(s, b): Cell() for s in STRATEGIES for b in BUDGETS[name]}
    full_tokens, n_steps, n_values, n_fresh = [], 0, 0, 0
    for k, traj in enumerate(trajectories):
        full_tokens.append(env.count.request(traj.messages))
        for st in steps_of(traj, every):
            n_steps += 1
            n_values += len(st.values)
            n_fresh += len(st.fresh)
            request = traj.messages[: st.index]
            for strategy in STRATEGIES:
                for budget in BUDGETS[name]:
                    cell = cells[(strategy, budget)]
                    cell.steps += 1
                    started = time.perf_counter()
                    try:
                        sent = STRATEGY_FUNCS[strategy](request, budget, env)
                    except BudgetTooSmall:
                        cell.refusals += 1
                        continue
                    except Exception as exc:  # counted and shown, never hidden
                        cell.errors += 1
                        log(f"  {strategy}@{budget} {traj.id} step {st.index}: {type(exc).__name__}: {exc}"[:300])
                        continue
                    finally:
                        cell.seconds += time.perf_counter() - started
                    tokens = env.count.request(sent)
                    cell.held += tokens <= budget
                    cell.held_1pct += tokens <= budget * 1.01
                    cell.ratios.append(tokens / budget)
                    text = sent_text(sent)
                    cell.wanted += len(st.values)
                    cell.found += sum(v in text for v in st.values)
                    cell.fresh += len(st.fresh)
                    cell.fresh_found += sum(v in text for v in st.fresh)
        if (k + 1) % 10 == 0 or k + 1 == len(trajectories):
            log(f"{name}: {k + 1}/{len(trajectories)} histories, {n_steps} steps")
    return {
        "histories": len(trajectories),
        "steps": n_steps,
        "values": n_values,
        "fresh_values": n_fresh,
        "history_tokens": {"median": statistics.median(full_tokens), "min": min(full_tokens), "max": max(full_tokens)},
        "messages": {
            "median": statistics.median(len(t.messages) for t in trajectories),
            "max": max(len(t.messages) for t in trajectories),
        },
        "rows": [{"strategy": s, "budget": b, **cells[(s, b)].row()} for s in STRATEGIES for b in BUDGETS[name]],
    }


def commit() -> str:
    """The commit measured, with ``+changes`` when the working tree's ``afm_local`` or this script differ from it."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(
        [*git, "status", "--porcelain", "--", "afm_local", "scripts/bench_agents.py"], capture_output=True, text=True
    ).stdout.strip()
    return head + ("+changes" if changed else "")


def cpu_isa() -> str:
    try:
        flags = next(
            line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")
        ).split()
        model = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model.split(':', 1)[1].strip()} ({isa}; {os.cpu_count()} cores visible)"


def fmt(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f}%" if pct else f"{value:.2f}"


def table(suite: dict, name: str) -> list[str]:
    lines = [
        "| strategy | budget | grounding recall | of values not yet used | budget held | ≤ budget + 1% "
        "| tokens / budget (mean, max) | refusals | errors | ms / step |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in suite["rows"]:
        lines.append(
            f"| {r['strategy']} | {r['budget']:,} | {fmt(r['recall'])} ({r['found']:,}/{r['values']:,}) | "
            f"{fmt(r['recall_fresh'])} ({r['fresh_found']:,}/{r['fresh_values']:,}) | "
            f"{fmt(r['budget_held'])} | {fmt(r['budget_held_1pct'])} | {fmt(r['tokens_per_budget'], False)}, "
            f"{fmt(r['max_tokens_per_budget'], False)} | {r['refusals']} | {r['errors']} | "
            f"{r['ms_per_step']:.1f} |"
        )
    return lines


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    suites = [s for s in ("tau", "coding") if s in results["suites"]]
    measures = [("recall", "grounding recall"), ("recall_fresh", "recall of values not yet used")]
    fig, axes = plt.subplots(2, len(suites), figsize=(6 * len(suites), 8), squeeze=False)
    for col, name in enumerate(suites):
        rows = results["suites"][name]["rows"]
        for row, (key, title) in enumerate(measures):
            ax = axes[row][col]
            for s in STRATEGIES:
                pts = [(r["budget"], r[key]) for r in rows if r["strategy"] == s and r[key] is not None]
                if pts:
                    held = all((r["budget_held"] or 0) >= 1.0 for r in rows if r["strategy"] == s)
                    ax.plot(
                        [p[0] for p in pts],
                        [100 * p[1] for p in pts],
                        marker="o",
                        linestyle="-" if held else "--",
                        label=s + ("" if held else " (over budget)"),
                    )
            ax.set_title(f"{name}: {title}")
            ax.set_xlabel("budget (tokens)")
            ax.set_ylabel("recall (%)")
            ax.set_ylim(0, 102)
            ax.set_xticks(BUDGETS[name])
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def headline(results: dict) -> list[str]:
    """Issue 35's bar, computed from the rows: AFM's grounding recall at least clear-tool-uses' + 15 points at
    every budget, and AFM's requests within the budget at every step."""
    lines = [
        "**Issue 35's bar** (AFM's grounding recall ≥ clear-tool-uses' + 15 points, budget held in 100 % of steps):",
        "",
    ]
    for name, suite in results["suites"].items():
        rows = {(r["strategy"], r["budget"]): r for r in suite["rows"]}
        parts = []
        for b in BUDGETS[name]:
            mine, theirs = rows[("afm", b)], rows[("clear_tool_uses", b)]
            gap = 100 * ((mine["recall"] or 0) - (theirs["recall"] or 0))
            held = mine["budget_held"] or 0
            met = gap >= 15 and held >= 1.0
            parts.append(f"{b:,}: {gap:+.1f} points, held {100 * held:.1f}% ({'met' if met else 'not met'})")
        lines.append(f"- {name}: " + "; ".join(parts))
    return lines


def write_docs(results: dict, out: str) -> None:
    json_path, md_path, png_path = (
        OUT_DIR / f"{out}_results.json",
        OUT_DIR / f"{out}.md",
        OUT_DIR / f"{out}_recall.png",
    )
    json_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    plot(results, png_path)
    a = results["args"]
    lines = [
        "# Agent trajectories: do the tool outputs the next action uses reach the model?",
        "",
        f"`python -m scripts.bench_agents --suite {a['suite']} --steps-every {a['steps_every']}"
        + (f" --limit {a['limit']}" if a["limit"] else "")
        + f" --trajectories {a['trajectories']} --seed {a['seed']}`"
        f" on {results['cpu']}, one thread, {results['date']}, commit {results['commit']}.",
        "",
        f"![grounding recall]({png_path.name})",
        "",
    ]
    lines += headline(results) + [""]
    for name, suite in results["suites"].items():
        title = {
            "tau": "τ-bench airline (real gpt-4o trajectories)",
            "coding": "Coding-agent shape (standard-library sources, real grep and command output)",
        }[name]
        lines += [
            f"## {title}",
            "",
            f"{suite['histories']} histories ({suite['messages']['median']:g} messages median, "
            f"{suite['messages']['max']} max; {suite['history_tokens']['median']:,.0f} tokens median, "
            f"{suite['history_tokens']['min']:,}–{suite['history_tokens']['max']:,}), {suite['steps']:,} steps, "
            f"{suite['values']:,} grounding values ({suite['fresh_values']:,} not yet in an earlier assistant "
            "message).",
            "",
            *table(suite, name),
            "",
        ]
    lines += METHOD.splitlines()
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


METHOD = """## Method

**Steps.** Every assistant message after a history's first two is a step: the request is every message
before it, as OpenAI chat messages (system, user, assistant with `tool_calls`, `tool` results), and each
strategy makes the messages it would send within the budget. Tool definitions are not part of the request
(neither the corpus nor the generator has them), so no strategy pays for them.

**Grounding values.** What the agent's next action uses that it could only have read in an earlier tool
output: the argument values of its next tool call (JSON leaves: strings of ≥ 3 characters, numbers of
≥ 3 digits) and, for τ, every value of an earlier tool result (same rule) that its next text quotes as a
whole word; kept only when the value occurs in an earlier tool result and in none of the system,
instruction and user text. Recall is the share of these values whose exact string occurs in the text the
strategy sends (contents, tool names and arguments). A refusal sends nothing and is counted apart; its
values are not in the recall.

**Budget held.** Each request is counted with the OpenAI cookbook's `num_tokens_from_messages` for
gpt-4o-class models, implemented in the script on tiktoken's own `o200k_base` (the project's offline
vocabulary through `TIKTOKEN_CACHE_DIR`), independent of afm-local's counter: 3 tokens a message, plus the
tokens of its role, content and name, of each tool call's name and arguments, and 3 for the reply.

**Strategies.**
- `afm`: `afm_local.integrations.packing.pack_turns(turns, budget, local_manager(AFMConfig(), cache=shared))`
  on a fresh manager each step: the whole request, the current tool loop after the last user message
  included, is AFM's to pack (issue 35): the newest result first after the constraints, older results
  whole, as digests or named in a line, scored against the instruction and the agent's latest call.
- `clear_tool_uses`: Anthropic's `clear_tool_uses_20250919` semantics with the trigger at the budget: once
  the request is over, every tool result but the last 3 is replaced by `[tool result cleared]` (the calls
  and their inputs are kept); if it is still over, whole units (a call with its results, or a message) are
  dropped oldest first, never the system message or the instruction; if one unit alone is still over, the
  longest content is cut to fit (`[cut]`).
- `recency`: the system message and the instruction, then the newest whole units that fit.
- `topk`: the system message and the instruction, then whole units by cosine between the unit and the
  instruction plus the last assistant message (multilingual-e5-small, the engine's embedder, the query
  side embedded as a query), best first while they fit, sent in their original order.
- `summary`: LangChain v1's `SummarizationMiddleware` stand-in: when the request is over the budget, the
  newest units are kept whole within 75 % of it and the older ones become one user message, "Here is a
  summary of the conversation to date:", made of each older unit's extractive summary (the engine's
  `ExtractiveCompressor`, ratio 0.2, over its first 4,000 characters), newest first, within the other 25 %.
  No model writes it: an abstractive summary could quote or lose values in ways this stand-in does not.

**Time.** `ms / step` is one thread on a machine shared with other jobs; a strategy's first budget pays what
is computed once per message and cached for the others (AFM's ingest: embedding, classification,
compression; top-k's and the summary's embeddings and summaries).

The baselines that can still be over after dropping cut the longest content; `afm` is never cut (what it
sends is what the engine decided).

## Sources

- τ-bench (Sierra, `sierra-research/tau-bench`, MIT): `historical_trajectories/gpt-4o-airline.json`, the 25
  even-numbered tasks × 4 trials, read from `../shared/corpora/tau_airline_dev.jsonl` at run time and
  never copied into this repository (credits and licence text: `../shared/corpora/LICENSES.md`).
- The coding-agent shape: no package on the index ships public coding-agent trajectories (SWE-agent,
  OpenHands) with a licence and in a form that can be read offline; the histories are made at run time
  from the CPython 3.11 standard library's sources on this machine (Python Software Foundation License),
  `grep -n` over them, and the real output of `python -m unittest -v test.test_*` and `python -m pip list`
  (kept in a cache folder outside the repository so that a rerun sees the same text). The instruction,
  the system prompt and the edit replacements are ours; the walk is seeded.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["tau", "coding", "all"], default="all")
    ap.add_argument("--limit", type=int, default=None, help="τ conversations (default: all 100)")
    ap.add_argument("--trajectories", type=int, default=12, help="coding trajectories (30 to 200 calls each)")
    ap.add_argument("--steps-every", type=int, default=1, help="measure every K-th step of a history")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--out", default="agents", help="basename of the written files under docs/benchmarks/")
    ap.add_argument("--render", action="store_true", help="only rewrite <out>.md and the plot from <out>_results.json")
    a = ap.parse_args()
    if a.render:
        write_docs(json.loads((OUT_DIR / f"{a.out}_results.json").read_text(encoding="utf-8")), a.out)
        return

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    env = Env()
    results: dict[str, Any] = {
        "args": vars(a),
        "cpu": cpu_isa(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": commit(),
        "strategies": STRATEGIES,
        "budgets": BUDGETS,
        "suites": {},
    }
    limit = a.limit
    if a.suite in ("tau", "all"):
        results["suites"]["tau"] = run_suite("tau", tau_trajectories(limit), a.steps_every, env, log)
    if a.suite in ("coding", "all"):
        count = min(a.trajectories, limit) if limit else a.trajectories
        results["suites"]["coding"] = run_suite("coding", coding_trajectories(count, a.seed), a.steps_every, env, log)
    write_docs(results, a.out)
    for name, suite in results["suites"].items():
        print(f"\n{name}\n" + "\n".join(table(suite, name)))


if __name__ == "__main__":
    main()
