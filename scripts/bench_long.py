"""Long conversations of real dialogue: does what a question needs, and every constraint, reach the model?

    .venv/bin/python -m scripts.bench_long [--suite real|realprefs|long|prefs|all] [--split dev|test]
        [--embedder multilingual-e5-small|minilm-l6-v2] [--config KEY=VALUE ...] [--out long]

Four suites, all of **real third-party dialogue** read from ``../shared/corpora`` (never copied into the
repository), every dialogue from one split of the dialogue split (``--split dev`` to tune on, ``--split
test`` to report):

* ``real``: 600-message conversations stitched from whole real dialogues (``scripts.relevance_sets``: chit-chat,
  negotiations, movie chats, bookings, assistant chats, taste interviews) and questions that annotators
  wrote after reading them, with the evidence turns they need (single- and multi-evidence, temporal, about
  a third person; no question reuses its evidence's distinctive words; data/long_real/questions_*.jsonl);
* ``realprefs``: a real stated preference (chosen by annotators from Circa, ReDial, CaSiNo, Topical-Chat),
  ten long unrelated real assistant exchanges, then a request the annotators wrote where it matters
  (``scripts.relevance_sets``);
* ``long`` and ``prefs``: the planted suites kept beside them (our own facts and constraints planted in real
  dialogue and asked about in nearly their own words; every retriever finds those).

Strategies at every budget: ``afm`` (``AFMConfig()``, with ``--config`` overrides), ``afm_paper``
(``AFMConfig.paper()``), ``afm_previous`` (the default before the relevance scoring: the paper's formula
with a similarity floor of 0.8, query-independent summaries, one placeholder per message), and the
retrievers that send whole messages best first: ``topk`` (the engine's embedder, the query embedded as a
query), ``topk_minilm`` (all-MiniLM-L6-v2, the retriever many users set up first, whatever ``--embedder``
says), ``bm25`` (bm25s, Snowball-stemmed terms), ``hybrid`` (reciprocal-rank fusion of e5 top-k and BM25,
k=60), and ``recency`` (the newest messages that fit).

**The headline measure of ``real`` is what reaches the model**: for each question whose gold answer (the
annotators' short answer) is words of its evidence turns, its *answer words* are the answer's content words,
stemmed as ``scripts.common.content_stems``, less the question's (and the preamble's); the share of them found
in the text sent (*answer words sent*), and whether all of them are (*whole answer sent*). An excerpt that cut
the answer away counts as evidence retained but not as the answer sent. Also reported per question: the share
of its evidence that reaches the model Full or Compressed (*retained*, a diagnostic), whether all of it does,
the share sent Full; for constraints and preferences whether their exact text is sent (*verbatim*); refusals,
tokens and build time. Writes docs/benchmarks/<out>.md, <out>_results.json and <out>_retention.png.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from afm_local import AFMConfig, ArtifactCache, BudgetTooSmall, FocusManager, local_manager
from afm_local.core.baselines import BaselineContext, naive_replay, top_k_similarity
from afm_local.core.protocols import Components, Embedder
from afm_local.engine.cache import content_hash
from afm_local.text.terms import terms
from scripts import relevance_sets
from scripts.common import OUT_DIR, WORD, content_stems, distinctive, isa, stem
from scripts.corpora import Turn, dialogues, split_of

PREAMBLE = "You are a helpful personal assistant with a long memory of our chats."
ACK = "Noted, I'll keep that in mind."

# Our own planted messages: (message, question, key terms). Facts are RELEVANT information; constraints
# and preferences are what the user set and every later answer must respect.
FACTS = [
    (
        "By the way, my sister Olga moved to Porto last month for a job at a bakery.",
        "Where did my sister move to, and what does she do there?",
        ["Porto", "bakery"],
    ),
    (
        "Our dog is called Biscuit, he's a three-year-old beagle who hates the vacuum cleaner.",
        "What is my dog's name and what breed is he?",
        ["Biscuit", "beagle"],
    ),
    (
        "Our team project is codenamed Bluebird and the launch date is the 3rd of June.",
        "What is the codename of our team project and when does it launch?",
        ["Bluebird", "June"],
    ),
    (
        "I parked the car on level 4 of the Riverside garage, spot 47, remember that for me.",
        "Where did I park the car?",
        ["level 4", "47"],
    ),
    (
        "The one book I reread every year is The Dispossessed by Ursula Le Guin.",
        "Which book do I reread every year?",
        ["Dispossessed"],
    ),
    (
        "I booked the dentist for Thursday the 14th at 9:30 with Dr. Mendes.",
        "When is my dentist appointment, and with which doctor?",
        ["14th", "Mendes"],
    ),
    (
        "My landlord Mr. Okafor agreed to lower the rent to 1,150 euros from September.",
        "What rent did my landlord agree to, and from when?",
        ["1,150", "September"],
    ),
    (
        "For the Valencia marathon I'm aiming to finish in 3 hours 45 minutes.",
        "What is my target time for the marathon, and which race is it?",
        ["3 hours 45", "Valencia"],
    ),
    (
        "The Wi-Fi code at the cabin is written on a card taped under the kettle.",
        "Where can I find the Wi-Fi code at the cabin?",
        ["kettle"],
    ),
    (
        "My manager Priya wants the quarterly deck in Google Slides, not PowerPoint.",
        "Which format does my manager want for the quarterly deck?",
        ["Google Slides"],
    ),
    (
        "Grandma's soup secret is smoked paprika and a splash of cider vinegar at the end.",
        "What is the secret in grandma's soup recipe?",
        ["paprika", "cider vinegar"],
    ),
    (
        "I switched my phone plan to Mobilink: 30 GB for 19 euros a month.",
        "Which phone plan did I switch to, and what does it cost?",
        ["Mobilink", "19 euros"],
    ),
    (
        "My daughter Mia plays the fox in the school play on the 22nd.",
        "Which role does my daughter play in the school play, and when is it?",
        ["fox", "22nd"],
    ),
    (
        "We chose the hexagonal sage-green kitchen tiles from Azulejo Studio.",
        "Which kitchen tiles did we choose?",
        ["hexagonal", "sage-green"],
    ),
    (
        "My bike is a blue Gazelle city bike, and I keep it in the courtyard shed.",
        "What kind of bike do I have and where do I keep it?",
        ["Gazelle", "shed"],
    ),
    (
        "My best friend Tomas is getting married in Ljubljana on 9 August.",
        "Where and when is my best friend's wedding?",
        ["Ljubljana", "9 August"],
    ),
]
CONSTRAINTS = [
    (
        "I'm severely allergic to shellfish, so please never suggest anything with shrimp, crab or lobster.",
        "Can you suggest a restaurant for a seafood dinner tonight?",
    ),
    (
        "I refuse to fly, so any trip you plan for me has to be by train, bus or car.",
        "How should I get from Berlin to Rome next month?",
    ),
    (
        "Our wedding budget is strictly 8,000 euros in total and we cannot go over it.",
        "Which kinds of wedding venues should we look at?",
    ),
    (
        "I'm vegetarian and I don't eat fish either, keep that in mind for every recipe.",
        "What should I cook for a dinner party this weekend?",
    ),
    (
        "I use a wheelchair, so every place you suggest must have step-free access.",
        "Which museums should we visit in Lisbon?",
    ),
    (
        "I'm seven months pregnant, so nothing strenuous or risky for me, please.",
        "What activities can we do on our beach holiday?",
    ),
    (
        "The grant report must be submitted no later than Friday the 14th at noon; there is no extension.",
        "How should I plan my week?",
    ),
    (
        "I can't swim, so please keep water activities off any plan you make for me.",
        "What can we do in Bali for three days?",
    ),
    (
        "I cannot stand spicy food at all, so keep anything hot off my plate.",
        "What should I order at the Thai restaurant tonight?",
    ),
    (
        "I'm on warfarin, so anything that interacts with blood thinners is off the table for me.",
        "Which painkiller can I take for a headache?",
    ),
    (
        "Please never schedule anything for me before 10 am, I work night shifts.",
        "Can you draft a schedule for my errands tomorrow?",
    ),
    (
        "I don't drink alcohol at all, I'm in recovery, so no bars or wine tastings.",
        "What should we do for my birthday evening?",
    ),
]
MIX = {"topical_chat": 0.45, "multiwoz22": 0.2, "sgd": 0.15, "casino": 0.15, "oasst_en100": 0.05}
STRATEGIES = ("afm", "afm_paper", "afm_previous", "topk", "topk_minilm", "bm25", "hybrid", "recency")
BASELINE_EMBEDDER = "minilm-l6-v2"  # the retriever many users set up first: all-MiniLM-L6-v2, whole messages
BUDGETS = {
    "real": (1000, 2000, 4000),
    "realprefs": (500, 1000, 2000),
    "long": (500, 1000, 2000, 4000),
    "prefs": (500, 1000, 2000),
}
RRF_K = 60
# The default before the relevance scoring (kept to measure against, and for users who want it back).
PREVIOUS = dict(
    scoring="paper",
    similarity_floor=0.8,
    full_threshold=0.45,
    compressed_threshold=0.25,
    compressed_form="summary",
    placeholders="message",
)


@dataclass
class Probe:
    """One question asked at the end, and the history messages it needs (its evidence)."""

    kind: str  # real: single, multi, temporal, third_person; planted: fact, constraint; preference
    evidence: list[int]
    question: str
    keys: list[str] = field(default_factory=list)
    verbatim: bool = False  # a constraint or preference: its exact text must reach the model
    answer: set[str] = field(default_factory=set)  # real: the gold answer's words that the evidence holds


@dataclass
class Conversation:
    messages: list[dict[str, str]]
    probes: list[Probe]
    suite: str


def dialogue_pool(split: str, corpus: str) -> list[list[Turn]]:
    return [turns for did, turns in dialogues(corpus).items() if split_of(corpus, did) == split and len(turns) >= 2]


def real_conversations(split: str, echo: bool = False) -> list[Conversation]:
    """The annotated conversations of ``split`` with their questions (evidence turn ids as positions).

    ``echo``: a diagnostic of the lexical channel, not a test set: each question gets up to two distinctive
    words of its first evidence message appended (seeded), as users often do repeat a name or a rare word,
    which the annotators' questions avoid by rule."""
    questions = relevance_sets.questions(split)
    rng = random.Random(f"echo:{split}")
    out = []
    for conv in relevance_sets.conversations():
        if conv.split != split:
            continue
        turns = conv.turns()
        where = {t.id: i for i, t in enumerate(turns)}
        df = Counter(s for t in turns for s in content_stems(t.text))
        probes = []
        for q in (q for q in questions if q["conversation"] == conv.id):
            question, first = q["question"], turns[where[q["evidence"][0]]].text
            if echo:
                rare = distinctive(first, df, len(turns))
                words = sorted({w for w in WORD.findall(first) if stem(w) in rare})
                question = question.rstrip("?") + " " + " ".join(rng.sample(words, min(2, len(words)))) + "?"
            evidence = [where[e] for e in q["evidence"]]
            words = answer_words(q["answer"], q["question"], [turns[i].text for i in evidence])
            probes.append(Probe(q["type"], evidence, question, answer=words))
        out.append(Conversation([{"role": t.role, "content": t.text} for t in turns], probes, "real"))
    return out


def answer_words(answer: str, question: str, evidence: list[str]) -> set[str]:
    """The words a question's gold answer needs from its evidence: the answer's content words (stemmed as
    ``scripts.common.content_stems``) less the question's; empty, so the question is not counted, unless the
    evidence holds every one of them (the answer is words of the evidence turns, not the annotator's gloss)."""
    words = content_stems(answer) - content_stems(question) - content_stems(PREAMBLE)
    held = set().union(*(content_stems(text) for text in evidence)) if evidence else set()
    return words if words and words <= held else set()


def real_preference_items(split: str) -> list[Conversation]:
    return [
        Conversation(item.messages(), [Probe("preference", [0], item.question, verbatim=True)], "realprefs")
        for item in relevance_sets.preference_items(split)
    ]


def long_conversation(rng: random.Random, split: str, turns: int) -> Conversation:
    """Whole real dialogues, stitched until ``turns`` messages, with facts and constraints planted."""
    corpora, weights = zip(*MIX.items())
    pools = {c: dialogue_pool(split, c) for c in corpora}
    messages: list[dict[str, str]] = []
    while len(messages) < turns:
        dialogue = rng.choice(pools[rng.choices(corpora, weights)[0]])
        messages += [{"role": t.role, "content": t.text} for t in dialogue]
    plants = [("fact", f) for f in rng.sample(FACTS, 8)] + [("constraint", c) for c in rng.sample(CONSTRAINTS, 2)]
    rng.shuffle(plants)
    slots = sorted(rng.sample(range(0, len(messages) - 20), len(plants)), reverse=True)
    probes = []
    for (kind, plant), pos in zip(plants, slots):  # insert from the end so earlier positions stay valid
        messages[pos:pos] = [{"role": "user", "content": plant[0]}, {"role": "assistant", "content": ACK}]
        keys = list(plant[2]) if kind == "fact" else []
        probes.append(Probe(kind, [pos], plant[1], keys, verbatim=kind == "constraint"))
    shift = 0
    for p in sorted(probes, key=lambda p: p.evidence[0]):  # later insertions moved the earlier ones' successors
        p.evidence[0] += shift
        shift += 2
    return Conversation(messages, probes, "long")


def preference_item(rng: random.Random, exchanges: list[list[Turn]], k: int) -> Conversation:
    """A stated preference of ours, ten long unrelated real exchanges, then the question it must shape."""
    statement, question = CONSTRAINTS[k % len(CONSTRAINTS)]
    messages = [{"role": "user", "content": statement}, {"role": "assistant", "content": ACK}]
    for pair in rng.sample(exchanges, 10):
        messages += [{"role": t.role, "content": t.text} for t in pair]
    return Conversation(messages, [Probe("preference", [0], question, verbatim=True)], "prefs")


def planted(split: str, seed: int, conversations: int, turns: int, preferences: int) -> list[Conversation]:
    rng = random.Random(f"{seed}:{split}")
    out = [long_conversation(rng, split, turns) for _ in range(conversations)]
    exchanges = relevance_sets.long_exchanges(split)
    return out + [preference_item(rng, exchanges, k) for k in range(preferences)]


@dataclass
class Subjects:
    """One conversation as every strategy sees it: the engine's managers, and the retrievers' scores."""

    conv: Conversation
    managers: dict[str, FocusManager]
    components: Components
    lexical: Callable[[str], np.ndarray]
    minilm: Callable[[str], np.ndarray] | None = None  # topk_minilm: each message's cosine to the query


def subjects(
    conv: Conversation,
    components: Components,
    configs: dict[str, AFMConfig],
    cache: ArtifactCache,
    minilm: Embedder | None = None,
) -> Subjects:
    import bm25s

    managers = {}
    for name, cfg in configs.items():
        managers[name] = FocusManager(cfg, components=components, cache=cache)
        managers[name].add_messages(conv.messages)
    dense_minilm = None
    if minilm is not None:
        model = minilm
        hashes = [content_hash(m["content"]) for m in conv.messages]
        found = [cache.embeddings.get(model.name, h) for h in hashes]
        todo = [i for i, v in enumerate(found) if v is None]
        for start in range(0, len(todo), 32):
            batch = todo[start : start + 32]
            for i, vector in zip(batch, model.embed([conv.messages[i]["content"] for i in batch], "passage")):
                cache.embeddings.put(model.name, hashes[i], vector)
                found[i] = vector
        vectors = np.vstack(found)

        def dense_minilm(query: str) -> np.ndarray:
            return vectors @ model.embed([query], "query")[0]

    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in terms(m["content"])] for m in conv.messages]
    index = bm25s.BM25()
    index.index(bm25s.tokenization.Tokenized(ids=docs, vocab=vocab), show_progress=False)

    def lexical(query: str) -> np.ndarray:
        known = [t for t in dict.fromkeys(terms(query)) if t in vocab]
        return np.asarray(index.get_scores(known)) if known else np.zeros(len(conv.messages))

    return Subjects(conv, managers, components, lexical, dense_minilm)


def rrf(dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    """Reciprocal-rank fusion: ``1 / (k + rank)`` from each ranking; a message BM25 does not retrieve (no query
    term) gets nothing from it, as in a search engine, rather than a rank decided by its position."""
    ranked = np.empty(len(dense))
    ranked[np.argsort(-dense, kind="stable")] = np.arange(len(dense))
    fused = 1 / (RRF_K + ranked)
    hits = np.flatnonzero(lexical > 0)
    fused[hits[np.argsort(-lexical[hits], kind="stable")]] += 1 / (RRF_K + np.arange(len(hits)))
    return fused


def retrieve(name: str, s: Subjects, question: str, budget: int) -> BaselineContext:
    msgs, counter = s.conv.messages, s.components.counter
    if name == "recency":
        return naive_replay(msgs, question, budget, counter=counter, preamble=PREAMBLE)
    if name == "topk_minilm":
        assert s.minilm is not None
        return top_k_similarity(
            msgs, question, budget, counter=counter, preamble=PREAMBLE, similarity=s.minilm(question)
        )
    dense = s.managers["afm"].similarity(question)
    scores = {
        "topk": lambda: dense,
        "bm25": lambda: s.lexical(question) + 1e-9 * dense,
        "hybrid": lambda: rrf(dense, s.lexical(question)),
    }[name]()
    return top_k_similarity(msgs, question, budget, counter=counter, preamble=PREAMBLE, similarity=scores)


def run_strategy(name: str, s: Subjects, probe: Probe, budget: int) -> dict:
    """Build one context; say what happened to the probe's evidence."""
    msgs = s.conv.messages
    row: dict = {
        "strategy": name,
        "budget": budget,
        "kind": probe.kind,
        "suite": s.conv.suite,
        "age": len(msgs) - min(probe.evidence),
    }
    ms = None
    if name in s.managers:
        try:
            t = time.perf_counter()
            ctx = s.managers[name].build_context(probe.question, budget, PREAMBLE)
            ms = (time.perf_counter() - t) * 1000
        except BudgetTooSmall as exc:
            return {
                **row,
                "refused": True,
                "minimum": exc.minimum,
                "retained": 0.0,
                "all": False,
                "full": 0.0,
                "verbatim": False,
                "keys": False,
                "answer": 0.0 if probe.answer else None,
                "answer_all": False if probe.answer else None,
                "tokens": 0,
                "ms": None,
            }
        forms = [ctx.items[i].fidelity.value for i in probe.evidence]
        sent, used = ctx.messages, ctx.tokens_used
    else:
        base = retrieve(name, s, probe.question, budget)
        forms = [base.fidelities.get(i, "dropped") for i in probe.evidence]
        sent, used = base.messages, base.tokens_used
    body = "\n".join(m["content"] for m in sent)
    kept = [f in ("full", "compressed") for f in forms]
    arrived = probe.answer & content_stems(body)
    return {
        **row,
        "refused": False,
        "retained": float(np.mean(kept)),
        "all": all(kept),
        "full": float(np.mean([f == "full" for f in forms])),
        "verbatim": all(msgs[i]["content"] in body for i in probe.evidence),
        "keys": all(k in body for k in probe.keys),
        "answer": len(arrived) / len(probe.answer) if probe.answer else None,  # None: no answer words to look for
        "answer_all": arrived == probe.answer if probe.answer else None,
        "tokens": used,
        "ms": ms,
    }


def evaluate(
    convs: list[Conversation],
    components: Components,
    configs: dict[str, AFMConfig],
    strategies: tuple[str, ...] = STRATEGIES,
    cache: ArtifactCache | None = None,
) -> list[dict]:
    cache = cache or ArtifactCache()
    minilm = None
    if "topk_minilm" in strategies:
        from afm_local.local.embedding import OnnxEmbedder

        minilm = OnnxEmbedder(BASELINE_EMBEDDER, threads=1)
    configs = {name: cfg for name, cfg in configs.items() if name in strategies or name == "afm"}
    rows = []
    for n, conv in enumerate(convs):
        s = subjects(conv, components, configs, cache, minilm)
        for probe in conv.probes:
            for budget in BUDGETS[conv.suite]:
                for name in strategies:
                    rows.append({"conversation": n, **run_strategy(name, s, probe, budget)})
    return rows


def pct(values: list[float]) -> str:
    return f"{100 * float(np.mean(values)):.1f}%" if values else "–"


def suite_table(rows: list[dict], suite: str) -> list[str]:
    """Strategy × budget: evidence retained, all of it, Full; verbatim where it applies; refusals, cost."""
    sel = [r for r in rows if r["suite"] == suite]
    verbatim = any(r["kind"] in ("constraint", "preference") for r in sel)
    answers = any(r.get("answer") is not None for r in sel)
    head = (
        "| strategy | budget |"
        + (" answer words sent | whole answer sent |" if answers else "")
        + " evidence retained | all evidence retained | evidence Full |"
        + (" constraints/preferences verbatim |" if verbatim else "")
        + " refusals | tokens (mean) | build ms (median) |"
    )
    out = [f"### {suite}", "", head, "|" + "---|" * (head.count("|") - 1)]
    for name in STRATEGIES:
        for b in BUDGETS[suite]:
            rs = [r for r in sel if r["strategy"] == name and r["budget"] == b]
            if not rs:
                continue
            cells = [pct([r["retained"] for r in rs]), pct([r["all"] for r in rs]), pct([r["full"] for r in rs])]
            if answers:
                scored = [r for r in rs if r.get("answer") is not None]
                cells[:0] = [pct([r["answer"] for r in scored]), pct([r["answer_all"] for r in scored])]
            if verbatim:
                cells.append(pct([r["verbatim"] for r in rs if r["kind"] in ("constraint", "preference")]))
            ms = [r["ms"] for r in rs if r["ms"] is not None]
            sent = [r["tokens"] for r in rs if not r["refused"]]
            out.append(
                f"| {name} | {b} | " + " | ".join(cells) + f" | {sum(r['refused'] for r in rs)}/{len(rs)} | "
                f"{statistics.mean(sent) if sent else 0:.0f} | "
                + (f"{statistics.median(ms):.2f}" if ms else "–")
                + " |"
            )
    return out + [""]


def kind_table(rows: list[dict], suite: str, budget: int) -> list[str]:
    """Evidence retained per question type at one budget."""
    sel = [r for r in rows if r["suite"] == suite and r["budget"] == budget]
    kinds = sorted({r["kind"] for r in sel})
    names = [name for name in STRATEGIES if any(r["strategy"] == name for r in sel)]
    out = [
        f"Answer words sent (evidence retained) per question type, {suite}, {budget} tokens:",
        "",
        "| strategy | "
        + " | ".join(
            f"{k} ({sum(r['kind'] == k and r.get('answer') is not None for r in sel) // len(names)}"
            f" / {sum(r['kind'] == k for r in sel) // len(names)})"
            for k in kinds
        )
        + " |",
        "|" + "---|" * (len(kinds) + 1),
    ]
    for name in names:
        cells = []
        for k in kinds:
            rs = [r for r in sel if r["strategy"] == name and r["kind"] == k]
            answered = [r["answer"] for r in rs if r.get("answer") is not None]
            cells.append(f"{pct(answered)} ({pct([r['retained'] for r in rs])})")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out + [""]


def headline(rows: list[dict], suites: list[str]) -> dict[str, dict]:
    """Per suite, the figure its plot and the README headline show: for ``real`` the answer words that reach the
    model (over the questions whose answer is words of their evidence), for the preference suites the statement
    verbatim, else the evidence retained; in % per strategy and budget (None where a strategy has no row)."""
    out: dict[str, dict] = {}
    for suite in suites:
        measure = {"realprefs": "verbatim", "prefs": "verbatim", "real": "answer"}.get(suite, "retained")
        values: dict[tuple[str, int], list[float]] = {}
        for r in rows:
            if r["suite"] == suite and r.get(measure) is not None:
                values.setdefault((r["strategy"], r["budget"]), []).append(float(r[measure]))
        out[suite] = {
            "measure": measure,
            "budgets": list(BUDGETS[suite]),
            "strategies": {
                name: [100 * float(np.mean(v)) if (v := values.get((name, b))) else None for b in BUDGETS[suite]]
                for name in STRATEGIES
            },
        }
    return out


def plot(figures: dict[str, dict], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(figures), figsize=(5.5 * len(figures), 4.2), squeeze=False)
    for ax, (suite, fig_suite) in zip(axes[0], figures.items()):
        budgets = fig_suite["budgets"]
        for name, ys in fig_suite["strategies"].items():
            ax.plot(budgets, [np.nan if y is None else y for y in ys], marker="o", label=name)
        ax.set_xscale("log")
        ax.set_xticks(budgets, [str(b) for b in budgets])
        measure = {"verbatim": "preference verbatim", "answer": "answer words sent"}.get(
            fig_suite["measure"], "evidence retained"
        )
        ax.set_title(f"{suite}: {measure}")
        ax.set_xlabel("budget (tokens)")
    axes[0][0].set_ylabel("%")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT_DIR / f"{out}_retention.png", dpi=110)
    plt.close(fig)


class ArtifactFile:
    """A ``CacheBackend`` kept in one pickle file, so that repeated runs on the same split only redo the builds.
    Entries are keyed by component name and content hash, as in the engine's cache; delete the file when ingest
    itself changes."""

    def __init__(self, path: str) -> None:
        import pickle
        from pathlib import Path

        self.path = Path(path)
        self.data: dict[tuple[str, str], bytes] = pickle.loads(self.path.read_bytes()) if self.path.exists() else {}
        self.dirty = False

    def load_artifact(self, kind: str, key: str) -> bytes | None:
        return self.data.get((kind, key))

    def save_artifact(self, kind: str, key: str, data: bytes) -> None:
        self.data[(kind, key)] = data
        self.dirty = True

    def save(self) -> None:
        import pickle

        if self.dirty:
            self.path.write_bytes(pickle.dumps(self.data))


def parse_overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key] = (
            None
            if value == "none"
            else json.loads(value)
            if value[:1].isdigit() or value in ("true", "false")
            else value
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["real", "realprefs", "long", "prefs", "all"], default="all")
    ap.add_argument("--split", choices=["dev", "test"], default="test")
    ap.add_argument("--embedder", default="multilingual-e5-small", choices=["multilingual-e5-small", "minilm-l6-v2"])
    ap.add_argument("--conversations", type=int, default=6, help="planted suite: conversations")
    ap.add_argument("--turns", type=int, default=600, help="planted suite: messages a conversation")
    ap.add_argument("--preferences", type=int, default=100, help="planted suite: preference items")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--echo",
        action="store_true",
        help="real suite: append 2 distinctive evidence words to each question (a diagnostic of the lexical channel)",
    )
    ap.add_argument("--config", nargs="*", default=[], help="AFMConfig overrides for the afm strategy (tuning on dev)")
    ap.add_argument("--out", default="long", help="basename of the written files under docs/benchmarks/")
    ap.add_argument(
        "--strategies", nargs="*", choices=STRATEGIES, default=list(STRATEGIES), help="a subset, while iterating"
    )
    ap.add_argument(
        "--every", type=int, default=1, help="real suite: every n-th question only (a subset while iterating)"
    )
    ap.add_argument(
        "--artifacts",
        default=None,
        help="a file (outside the repository) that keeps ingest's artifacts between runs: only builds are redone",
    )
    args = ap.parse_args()
    t0 = time.time()
    suites = ["real", "realprefs", "long", "prefs"] if args.suite == "all" else [args.suite]
    convs: list[Conversation] = []
    if "real" in suites:
        convs += real_conversations(args.split, args.echo)
        for c in convs:
            c.probes = c.probes[:: args.every]
    if "realprefs" in suites:
        convs += real_preference_items(args.split)
    if "long" in suites or "prefs" in suites:
        convs += [
            c
            for c in planted(args.split, args.seed, args.conversations, args.turns, args.preferences)
            if c.suite in suites
        ]
    overrides = parse_overrides(args.config)
    configs = {
        name: AFMConfig(embedder=args.embedder, **base)
        for name, base in (
            ("afm", overrides),
            ("afm_paper", AFMConfig.paper().model_dump(exclude_defaults=True)),
            ("afm_previous", PREVIOUS),
        )
    }
    components = local_manager(configs["afm"]).components
    strategies = tuple(name for name in STRATEGIES if name in args.strategies)
    backend = ArtifactFile(args.artifacts) if args.artifacts else None
    rows = evaluate(convs, components, configs, strategies, ArtifactCache(backend))
    if backend is not None:
        backend.save()
    lines = [line for suite in suites for line in suite_table(rows, suite)]
    if "real" in suites:
        lines += kind_table(rows, "real", 2000)
    print("\n".join(lines))
    figures = headline(rows, suites)
    plot(figures, args.out)
    wall = time.time() - t0
    result = {
        "args": vars(args),
        "classifier": components.classifier.name,
        "embedder": components.embedder.name,
        "isa": isa(),
        "config": configs["afm"].model_dump(),
        "headline": figures,
        "rows": rows,
        "wall_s": wall,
    }
    compact = json.dumps(result, separators=(",", ":"), default=str)  # thousands of rows: no indentation
    (OUT_DIR / f"{args.out}_results.json").write_text(compact, encoding="utf-8")
    md = [
        "# Long conversations of real dialogue",
        "",
        f"Command: `.venv/bin/python -m scripts.bench_long --suite {args.suite} --split {args.split} --embedder "
        f"{args.embedder}"
        + (f" --config {' '.join(args.config)}" if args.config else "")
        + f" --out {args.out}` (wall "
        f"{wall:.0f} s; classifier `{components.classifier.name}`, embedder `{components.embedder.name}`; {isa()}).",
        "",
        "What each suite and strategy is: the docstring of scripts/bench_long.py. *answer words sent* (the headline "
        "of `real`): over the questions whose gold answer is words of their evidence, the share of the answer's "
        "content words (less the question's) found in the text sent; *whole answer sent*: all of them are. *evidence "
        "retained* (a diagnostic): the share of a question's evidence messages that reach the model Full or "
        "Compressed, averaged over questions; *all*: every evidence message of the question does; *Full*: the share "
        "sent whole; *verbatim*: the constraint's or preference's exact text is sent.",
        "",
        *lines,
        f"![retention]({args.out}_retention.png)",
        "",
    ]
    (OUT_DIR / f"{args.out}.md").write_text("\n".join(md), encoding="utf-8")
    print(f"wall {wall:.0f} s")


if __name__ == "__main__":
    main()
