"""Peers side by side: afm-local, LangChain ``trim_messages`` and LlamaIndex ``Memory`` on one history.

Issue 19 asks whether afm-local's per-turn cost keeps up with what people use instead, and whether
they keep a constraint that afm-local keeps. So one seeded chat (a peanut allergy stated at its
second message, then thousands of ordinary turns) goes through each system, and for each we time
ingesting a message, one turn with a NEW query at each history size (nothing cached for it), and a
cold process packing ``examples/peanut_trip.json``; and we check whether the allergy is in what each
would send at 300, 500 and 800 tokens.

Fairness, and why the harness looks like this:
- every system runs in its own child process, so its peak RSS (``wait4``) is its own;
- the systems run one after another, in a rotating order, round by round, and ratios are taken to
  afm-local within the same round: on a noisy shared machine that cancels most of the drift;
- every library runs on one thread, and all count tokens with afm-local's offline ``o200k_base``
  counter (the peers' defaults would download tiktoken files or hub tokenizers), so a budget means
  the same for all; "tokens sent" below is counted the same way for all (content + 3 a message +
  3 for the reply, as ``AFMConfig`` and OpenAI count);
- the afm-local side uses only the public API (``FocusManager``, ``local_components``, ``AFMConfig``),
  so this script keeps working while the engine changes: rerun it, and its figures follow.

    .venv/bin/python -m scripts.bench_peers [--sizes 100,1000,5000] [--budget 2000] [--rounds 3] [--turns 20]

Needs the ``bench-peers`` extra (langchain-core, llama-index-core): ``.venv/bin/pip install -e '.[bench-peers]'``.
Writes docs/benchmarks/peers.md and peers_results.json (the raw samples).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from afm_local import AFMConfig, FocusManager, local_components
from afm_local.core.accounting import message_cost, sent_cost
from afm_local.local import token_counter
from scripts.common import OUT_DIR, ROOT

# Every system runs in a child started with these (``spawn``): one thread per library, set before numpy,
# onnxruntime or tokenizers load there. This parent process only starts children and reports.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "AFM_THREADS": "1",
}

Chat = list[dict[str, str]]
SYSTEMS = ("afm-local", "langchain", "llamaindex")
LABELS = {"afm-local": "afm-local", "langchain": "LangChain `trim_messages`", "llamaindex": "LlamaIndex `Memory`"}
PEER_MODULES = {"langchain_core": "langchain-core", "llama_index.core": "llama-index-core"}
INSTALL = ".venv/bin/pip install -e '.[bench-peers]'"
TRIP = ROOT / "examples" / "peanut_trip.json"
SURVIVAL_BUDGETS = (300, 500, 800)
COLD_BUDGET = 500
PREAMBLE = "You are a helpful assistant."
CONFIG = AFMConfig()  # afm-local's defaults; its chat accounting counts what every system sends
TARGET_SIZE, TARGET_MS = 5000, 3  # issue 19: a new-query build at 5,000 messages within the embedding + 3 ms
LC_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


# ---------------------------------------------------------------------------------------- the chat


def trip() -> dict[str, Any]:
    """The 39-message Thailand trip whose peanut allergy (turn 2) is the constraint to keep."""
    return json.loads(TRIP.read_text(encoding="utf-8"))


def planted_constraint() -> str:
    """The allergy sentence of the trip: planted early in the long history and looked for verbatim."""
    return next(m["content"] for m in trip()["messages"] if "peanut allergy" in m["content"])


PLACES = ["Bangkok", "Lisbon", "Porto", "Tbilisi", "Kazan", "Hanoi", "Kyoto", "Seville", "Krakow", "Oaxaca", "Tallinn"]
MONTHS = ["March", "April", "May", "June", "September", "October", "November"]
THINGS = {  # several domains, so that similarity has something to tell apart
    "travel": [
        "night train",
        "museum pass",
        "ferry to the islands",
        "old town walk",
        "food market",
        "airport transfer",
    ],
    "cooking": ["sourdough loaf", "green curry", "dumplings", "ratatouille", "shakshuka", "lemon tart"],
    "work": ["quarterly report", "database migration", "team offsite", "hiring loop", "design review", "release notes"],
    "home": ["balcony garden", "bookshelf", "bike repair", "heating bill", "kitchen lamp", "spare room"],
    "hobbies": [
        "marathon training",
        "film club",
        "chess openings",
        "watercolour class",
        "guitar practice",
        "photo walk",
    ],
}
QUESTIONS = [
    "What would you suggest for the {thing} in {place}?",
    "Can you compare the {thing} with the {thing2} for me?",
    "How long does the {thing} usually take?",
    "Is the {thing} worth it in {month}?",
    "Ok. And what about the {thing2}?",
    "I liked your idea about the {thing}. Any tips to make it easier?",
    "A friend from {place} says the {thing} is overrated. What do you think?",
    "Could you give me a rough plan for the {thing} over {n} weeks?",
]
ACKS = ["Thanks!", "Sounds good, let's keep that.", "Great, that helps.", "Perfect, thank you."]
SENTENCES = [
    "The {thing} is a good choice; most people spend about {n} hours on it.",
    "Expect to pay between {lo} and {hi} for it, a little more at weekends.",
    "In {month} it gets busier, so start early, ideally before {hour}:00.",
    "A simpler alternative is the {thing2}, which takes about half the time.",
    "People in {place} often do it differently, with more improvisation and less planning.",
    "I would keep a short list of {n} options and decide on the day.",
    "Reviews are mostly positive: practical and easy to follow, though a bit slow at the start.",
    "If you want, I can turn this into a step-by-step plan with {n} stages.",
    "Many people combine it with the {thing2}, which fits well into the same week.",
]


def _fill(template: str, rng: random.Random, domain: str) -> str:
    thing, thing2 = rng.sample(THINGS[domain], 2)
    lo = rng.randint(10, 300)
    return template.format(
        thing=thing,
        thing2=thing2,
        place=rng.choice(PLACES),
        month=rng.choice(MONTHS),
        n=rng.randint(2, 9),
        lo=lo,
        hi=lo + rng.randint(20, 900),
        hour=rng.randint(6, 11),
    )


def chat_history(n: int, seed: int) -> Chat:
    """A seeded mixed chat of ``n`` messages: short episodes in several domains, user questions and
    acknowledgements, assistant answers of two to five sentences, the allergy as the second message."""
    rng = random.Random(seed)
    rows = [
        {"role": "user", "content": "Hi! I'd like help with a few plans over the next months."},
        {"role": "user", "content": planted_constraint()},
    ]
    domain, left = "travel", 0
    while len(rows) < n:
        if left == 0:
            domain, left = rng.choice(sorted(THINGS)), rng.randint(6, 14)
        left -= 1
        if len(rows) % 2 == 0:
            text = rng.choice(ACKS) if rng.random() < 0.1 else _fill(rng.choice(QUESTIONS), rng, domain)
            rows.append({"role": "user", "content": text})
        else:
            body = " ".join(_fill(s, rng, domain) for s in rng.sample(SENTENCES, rng.randint(2, 5)))
            rows.append({"role": "assistant", "content": body})
    return rows[:n]


def new_queries(count: int, seed: int, seen: set[str]) -> list[str]:
    """``count`` questions that appear nowhere in the history nor twice, so no system (nor afm-local's
    embedding cache) has met them before."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        query = _fill(rng.choice(QUESTIONS), rng, rng.choice(sorted(THINGS)))
        if query not in seen:
            seen.add(query)
            out.append(query)
    return out


# ----------------------------------------------------------------------------------- the systems


class Peer(Protocol):
    """One conversation in one system: take messages, then say what would be sent for a query."""

    def ingest(self, role: str, content: str) -> None: ...

    def turn(self, query: str, preamble: str) -> Chat: ...


class AfmLocal:
    """afm-local through its public API: one ``FocusManager`` over shared ``local_components`` (the
    embedder, the trained classifier and the extractive compressor; no background GGUF model, as in
    ``afm-local pack``), default ``AFMConfig``."""

    def __init__(self, components: Any, budget: int) -> None:
        self.fm = FocusManager(CONFIG, components=components)
        self.embedder = components.embedder
        self.classifier = components.classifier.name
        self.budget = budget

    def ingest(self, role: str, content: str) -> None:
        self.fm.add_message(role, content)

    def turn(self, query: str, preamble: str) -> Chat:
        return self.fm.build_context(query, self.budget, preamble).messages

    def embed(self, query: str) -> None:
        """The query embedding alone, which ``turn`` includes (the embedder itself caches nothing)."""
        self.embedder.embed([query])


class LangChainTrim:
    """LangChain's documented recipe: message objects kept in a list, and per turn
    ``trim_messages(strategy="last", include_system=True, start_on="human")`` over preamble, history
    and query, counted with afm-local's counter, within the budget less the reply's overhead."""

    def __init__(self, counter: Any, budget: int) -> None:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

        self.counter = counter
        self.max_tokens = budget - CONFIG.reply_overhead
        self.kinds = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}
        self.trim = trim_messages
        self.history: list[Any] = []

    def ingest(self, role: str, content: str) -> None:
        self.history.append(self.kinds[role](content))

    def turn(self, query: str, preamble: str) -> Chat:
        messages = [self.kinds["system"](preamble), *self.history, self.kinds["user"](query)]
        kept = self.trim(
            messages,
            max_tokens=self.max_tokens,
            token_counter=self.count,
            strategy="last",
            include_system=True,
            start_on="human",
        )
        return [{"role": LC_ROLES[m.type], "content": m.content} for m in kept]

    def count(self, messages: list[Any]) -> int:
        """Tokens of a list of messages, as afm-local counts them (content + per-message overhead)."""
        return sum(message_cost(self.counter, m.content, CONFIG) for m in messages)


class LlamaIndexMemory:
    """LlamaIndex's ``Memory`` (its default in-memory SQLite store, no memory blocks): ``put`` each
    message; per turn ``get(input=query)``, sent between the preamble and the query. Its
    ``token_limit`` is the budget; the flush size keeps the library's own proportion (a tenth of the
    limit: from_defaults' absolute 3,000 is meant for its 30,000-token default and would flush most
    of a small budget at once); ``tokenizer_fn`` is afm-local's counter (it takes the list's length)."""

    def __init__(self, counter: Any, budget: int) -> None:
        from llama_index.core.llms import ChatMessage
        from llama_index.core.memory import Memory

        self.message = ChatMessage
        self.memory = Memory.from_defaults(
            token_limit=budget, token_flush_size=max(1, budget // 10), tokenizer_fn=counter.encode
        )

    def ingest(self, role: str, content: str) -> None:
        self.memory.put(self.message(role=role, content=content))

    def turn(self, query: str, preamble: str) -> Chat:
        got = self.memory.get(input=query)
        return [
            {"role": "system", "content": preamble},
            *({"role": m.role.value, "content": m.content or ""} for m in got),
            {"role": "user", "content": query},
        ]


def load(system: str) -> tuple[Callable[[int], Peer], Any]:
    """What one system needs, loaded once per process: a maker of conversations (given a budget) and
    the token counter that counts what is sent."""
    if system == "afm-local":
        components = local_components(CONFIG, threads=1)
        return (lambda budget: AfmLocal(components, budget)), components.counter
    counter = token_counter(CONFIG.tokenizer)
    if system == "langchain":
        return (lambda budget: LangChainTrim(counter, budget)), counter
    return (lambda budget: LlamaIndexMemory(counter, budget)), counter


def tokens_sent(counter: Any, sent: Chat) -> int:
    """Everything a chat API would bill for ``sent``, counted the way afm-local counts its budget."""
    return sent_cost(counter, sent, CONFIG)


def contains(sent: Chat, text: str) -> bool:
    return text in "\n".join(m["content"] for m in sent)


# ------------------------------------------------------------------------------ child processes


def ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def survival(make: Callable[[int], Peer], counter: Any) -> dict[str, dict[str, Any]]:
    """For each small budget, a fresh conversation of the trip: is the allergy sent verbatim?"""
    data, constraint = trip(), planted_constraint()
    out = {}
    for budget in SURVIVAL_BUDGETS:
        peer = make(budget)
        for row in data["messages"]:
            peer.ingest(row["role"], row["content"])
        sent = peer.turn(data["query"], data["preamble"])
        out[str(budget)] = {"kept": contains(sent, constraint), "tokens": tokens_sent(counter, sent)}
    return out


def worker(system: str, sizes: list[int], budget: int, turns: int, seed: int) -> dict[str, Any]:
    """One system's run, in its own process: ingest the history message by message and, at each size,
    ``turns`` turns with new queries; then the small-budget survival check."""
    start = time.perf_counter()
    make, counter = load(system)
    load_ms = ms_since(start)
    history = chat_history(max(sizes), seed)
    queries = iter(new_queries(turns * len(sizes), seed + 1, {row["content"] for row in history}))
    constraint = planted_constraint()
    peer = make(budget)
    result: dict[str, Any] = {
        "system": system,
        "load_ms": load_ms,
        "ingest_ms": [],
        "turn_ms": {},
        "embed_ms": {},
        "planted_kept": {},
        "tokens_sent": {},
    }
    if isinstance(peer, AfmLocal):
        result["classifier"] = peer.classifier
    for i, row in enumerate(history, 1):
        t = time.perf_counter()
        peer.ingest(row["role"], row["content"])
        result["ingest_ms"].append(ms_since(t))
        if i not in sizes:
            continue
        turn_ms, embed_ms, kept, sent_tokens = [], [], 0, []
        for _ in range(turns):
            query = next(queries)
            if isinstance(peer, AfmLocal):
                t = time.perf_counter()
                peer.embed(query)
                embed_ms.append(ms_since(t))
            t = time.perf_counter()
            sent = peer.turn(query, PREAMBLE)
            turn_ms.append(ms_since(t))
            kept += contains(sent, constraint)
            sent_tokens.append(tokens_sent(counter, sent))
        result["turn_ms"][str(i)], result["planted_kept"][str(i)] = turn_ms, kept
        result["tokens_sent"][str(i)] = statistics.median(sent_tokens)
        if embed_ms:
            result["embed_ms"][str(i)] = embed_ms
        print(f"  {system}: {i} messages, turn {statistics.median(turn_ms):.2f} ms", file=sys.stderr, flush=True)
    result["survival"] = survival(make, counter)
    return result


def pack(system: str, path: Path, budget: int) -> Chat:
    """The peers' equivalent of ``afm-local pack FILE --budget N``: a fresh process that loads the
    system, takes the file's messages and prints what it would send for the file's query."""
    make, _ = load(system)
    data = json.loads(path.read_text(encoding="utf-8"))
    peer = make(budget)
    for row in data["messages"]:
        peer.ingest(row["role"], row["content"])
    return peer.turn(data["query"], data["preamble"])


def spawn(command: list[str]) -> tuple[str, float, float]:
    """Run a child to its end with one thread per library: its stdout, wall seconds and its own peak RSS
    in MB (``wait4`` reports that child's usage alone, not the sum of all children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **THREAD_ENV}, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"bench_peers: {' '.join(command)} exited with {proc.returncode}")
    return out, wall, usage.ru_maxrss / 1024


def cold_command(system: str) -> list[str]:
    if system == "afm-local":
        return [str(Path(sys.executable).parent / "afm-local"), "pack", str(TRIP), "--budget", str(COLD_BUDGET)]
    return [sys.executable, "-m", "scripts.bench_peers", "--pack", system, str(TRIP), "--budget", str(COLD_BUDGET)]


def run_round(order: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """One round: every system's full run, then every system's cold pack, each in a fresh process."""
    sizes = ",".join(map(str, args.sizes))
    out: dict[str, Any] = {"load_average": os.getloadavg()[0]}  # how busy the shared machine was
    for system in order:
        text, wall, rss = spawn(
            [
                sys.executable,
                "-m",
                "scripts.bench_peers",
                "--worker",
                system,
                "--sizes",
                sizes,
                "--budget",
                str(args.budget),
                "--turns",
                str(args.turns),
                "--seed",
                str(args.seed),
            ]
        )
        out[system] = {**json.loads(text.splitlines()[-1]), "wall_s": round(wall, 2), "rss_mb": round(rss, 1)}
    constraint = planted_constraint()
    for system in order:
        text, wall, rss = spawn(cold_command(system))
        out[system]["cold"] = {"wall_s": round(wall, 3), "rss_mb": round(rss, 1), "kept": constraint in text}
        print(f"  {system}: cold pack {wall:.2f} s", file=sys.stderr, flush=True)
    return out


# ------------------------------------------------------------------------------------- the report


def med(values: list[float]) -> float:
    return statistics.median(values)


def metric(run: dict[str, Any], key: str) -> list[float]:
    """The samples of one metric in one system's run: ``ingest``, ``turn@SIZE``, ``embed@SIZE`` (afm-local),
    ``cold``, ``rss`` or ``cold_rss``."""
    name, _, size = key.partition("@")
    if name == "ingest":
        return run["ingest_ms"]
    if name in ("turn", "embed"):
        return run[f"{name}_ms"][size]
    return {"cold": [run["cold"]["wall_s"]], "rss": [run["rss_mb"]], "cold_rss": [run["cold"]["rss_mb"]]}[name]


def pooled(rounds: list[dict[str, Any]], system: str, key: str) -> list[float]:
    """One metric's samples of one system over all rounds, in order."""
    return [v for r in rounds for v in metric(r[system], key)]


def summary(rounds: list[dict[str, Any]], system: str, key: str) -> tuple[float, float]:
    """(median of all samples pooled over rounds, median over rounds of the ratio of round medians to
    afm-local's in that same round)."""
    ratios = [med(metric(r[system], key)) / med(metric(r["afm-local"], key)) for r in rounds]
    return med(pooled(rounds, system, key)), med(ratios)


def num(x: float) -> str:
    """Three significant digits (a LangChain ingest is microseconds, an afm-local one milliseconds)."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def cell(rounds: list[dict[str, Any]], system: str, key: str, unit: str) -> str:
    value, ratio = summary(rounds, system, key)
    return f"{num(value)} {unit}" if system == "afm-local" else f"×{num(ratio)} ({num(value)} {unit})"


def versions() -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in ("afm-local", *PEER_MODULES.values())}


def report(rounds: list[dict[str, Any]], args: argparse.Namespace) -> str:
    sizes, first = args.sizes, rounds[0]
    v = versions()
    loads = ", ".join(f"{r['load_average']:.1f}" for r in rounds)
    lines = [
        "# Peers: afm-local, LangChain `trim_messages`, LlamaIndex `Memory`",
        "",
        f"`python -m scripts.bench_peers --sizes {','.join(map(str, sizes))} --budget {args.budget} --rounds "
        f"{len(rounds)} --turns {args.turns} --seed {args.seed}`; afm-local {v['afm-local']} (classifier "
        f"`{first['afm-local']['classifier']}`), langchain-core {v['langchain-core']}, llama-index-core "
        f"{v['llama-index-core']}, Python {platform.python_version()}, {os.cpu_count()} cores, one thread per library; "
        f"load average (1 min) at the start of each round: {loads}.",
        "",
        f"One seeded chat of {max(sizes):,} messages (a peanut allergy as its second message, then short episodes "
        f"about travel, cooking, work, home and hobbies). Each system runs in its own process, "
        f"{len(rounds)} round{'s' * (len(rounds) != 1)} in "
        "a rotating order; a turn uses a query none of them has seen. afm-local's figures are absolute; "
        "the peers' are the median over rounds of their ratio to afm-local in the same round, with their own "
        "absolute median in brackets. Medians; times in ms unless marked.",
        "",
        f"| system | ingest, per message | turn @{' | turn @'.join(f'{s:,}' for s in sizes)} | cold `pack` of the trip "
        f"({COLD_BUDGET} tok) | peak RSS, whole run | peak RSS, cold pack |",
        "|---|" + "---:|" * (len(sizes) + 4),
    ]
    for system in SYSTEMS:
        cells = [
            cell(rounds, system, "ingest", "ms"),
            *(cell(rounds, system, f"turn@{s}", "ms") for s in sizes),
            cell(rounds, system, "cold", "s"),
            cell(rounds, system, "rss", "MB"),
            cell(rounds, system, "cold_rss", "MB"),
        ]
        lines.append(f"| {LABELS[system]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "A turn is: afm-local `build_context` (one query embedding, scoring, packing, rendering); LangChain "
        "`trim_messages` over the message objects; LlamaIndex `Memory.get`. Ingest is: afm-local `add_message` "
        "(embed, classify, compress, count); LangChain building a message object; LlamaIndex `Memory.put`.",
        "",
    ]

    lines += [
        f"## afm-local's turn against its query embedding (budget {args.budget})",
        "",
        "| history | `build_context`, new query | query embedding alone | build − embedding (paired) | "
        "LlamaIndex `Memory.get` | target |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for s in sizes:
        build, embed = pooled(rounds, "afm-local", f"turn@{s}"), pooled(rounds, "afm-local", f"embed@{s}")
        rest = med([b - e for b, e in zip(build, embed)])
        anchor = med(pooled(rounds, "llamaindex", f"turn@{s}"))
        target = f"≤ {TARGET_MS} ms: {'met' if rest <= TARGET_MS else 'missed'}" if s == TARGET_SIZE else ""
        lines.append(f"| {s:,} | {num(med(build))} | {num(med(embed))} | {num(rest)} | {num(anchor)} | {target} |")
    lines += [
        "",
        "The embedding is timed on the same query just before the build (the embedder caches nothing; "
        "afm-local's cache has not seen the query). Issue 19 also asks for the build at 1,000 messages to be at "
        "most half of today's in the same run: compare this table with a run of the reference revision.",
        "",
    ]

    edges = [0, *sizes]
    lines += [
        "## Ingest by position in the history (ms per message)",
        "",
        "| system | " + " | ".join(f"messages {a + 1:,}–{b:,}" for a, b in zip(edges, edges[1:])) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for system in SYSTEMS:
        spans = [med([v for r in rounds for v in r[system]["ingest_ms"][a:b]]) for a, b in zip(edges, edges[1:])]
        lines.append(f"| {LABELS[system]} | " + " | ".join(num(x) for x in spans) + " |")
    lines.append("")

    lines += [
        "## Does the constraint reach the model?",
        "",
        f"`examples/peanut_trip.json` (39 messages, the allergy at turn 2, its own query and preamble): is the "
        "allergy message sent verbatim, and how many tokens are sent in all. Then the long history: in how many "
        f"of the turns at each size (budget {args.budget}) the allergy planted as message 2 was sent.",
        "",
        "| system | "
        + " | ".join(f"trip @{b}" for b in SURVIVAL_BUDGETS)
        + f" | cold pack @{COLD_BUDGET} | "
        + " | ".join(f"long @{s:,}" for s in sizes)
        + " |",
        "|---|" + "---|" * (len(SURVIVAL_BUDGETS) + 1 + len(sizes)),
    ]
    for system in SYSTEMS:
        run = first[system]
        trip_cells = [
            f"{'kept' if run['survival'][str(b)]['kept'] else 'lost'} ({run['survival'][str(b)]['tokens']} tok)"
            for b in SURVIVAL_BUDGETS
        ]
        cold = "kept" if all(r[system]["cold"]["kept"] for r in rounds) else "lost"
        long_cells = [
            f"{sum(r[system]['planted_kept'][str(s)] for r in rounds)}/{args.turns * len(rounds)} "
            f"({med([r[system]['tokens_sent'][str(s)] for r in rounds]):.0f} tok)"
            for s in sizes
        ]
        lines.append(f"| {LABELS[system]} | " + " | ".join([*trip_cells, cold, *long_cells]) + " |")
    lines += [
        "",
        "How each is called: see docs/peers.md; the original AFM code is described there too (it is not on "
        "the package index, so it is not run here).",
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a missing parent package (llama_index is a namespace)
        return False


def require_peers() -> None:
    """Stop before any child starts, naming the install command, when a peer library is missing."""
    missing = [pkg for module, pkg in PEER_MODULES.items() if not installed(module)]
    if missing:
        raise SystemExit(f"bench_peers needs {', '.join(missing)}: {INSTALL}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=lambda s: sorted({int(x) for x in s.split(",")}),
        default=[100, 1000, 5000],
        help="history sizes at which turns are timed (comma-separated)",
    )
    parser.add_argument("--budget", type=int, default=2000, help="token budget of the timed turns")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=20, help="turns, each with a new query, at each size and round")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=OUT_DIR / "peers.md")
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--pack", nargs=2, metavar=("SYSTEM", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(worker(args.worker, args.sizes, args.budget, args.turns, args.seed)))
        return
    if args.pack:
        print(json.dumps(pack(args.pack[0], Path(args.pack[1]), args.budget), ensure_ascii=False, indent=1))
        return

    require_peers()
    rounds = []
    for k in range(args.rounds):
        order = list(SYSTEMS[k % len(SYSTEMS) :] + SYSTEMS[: k % len(SYSTEMS)])
        print(f"round {k + 1}/{args.rounds}: {', '.join(order)}", file=sys.stderr, flush=True)
        rounds.append(run_round(order, args))
    text = report(rounds, args)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    raw = {
        "args": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("worker", "pack")
        },
        "versions": versions(),
        "rounds": rounds,
    }
    args.out.with_name("peers_results.json").write_text(json.dumps(raw), encoding="utf-8")


if __name__ == "__main__":
    main()
