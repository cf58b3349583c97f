"""Long conversations built from real dialogue: does the evidence, and every constraint, reach the model?

    .venv/bin/python -m scripts.bench_long [--suite long|prefs|all] [--split dev|test] [--conversations 6]
        [--turns 600] [--budgets 500,1000,2000,4000] [--seed 7] [--config KEY=VALUE ...]

Two suites, both made of **real third-party dialogue** read from ``../shared/corpora`` (never
copied into the repository) with our own planted messages at known turns:

* ``long``: conversations of about ``--turns`` messages stitched from whole real dialogues
  (Topical-Chat chit-chat, MultiWOZ and SGD bookings, CaSiNo negotiations, OpenAssistant chats),
  like the multi-session chats of a long-lived assistant. Eight facts ("my sister moved to Porto...")
  and two constraints ("I'm severely allergic to shellfish...") are planted at user turns spread
  over the history; at the end one question per planted message is asked, each in its own build.
* ``prefs``: a stated preference ("I can't swim, so no water activities") followed by ten long,
  unrelated real exchanges (OpenAssistant and Dolly requests with their answers), then a question
  where the preference matters: the preference-following setting.

Dialogues come from one split of the labelling sample's dialogue split (``--split dev`` to tune on,
``--split test`` to report): no dialogue used for tuning is in the reported figures.

Strategies, at every budget: ``afm`` (``AFMConfig()``, the default), ``afm_paper``
(``AFMConfig.paper()``), ``recency`` (newest messages that fit) and ``topk`` (whole messages, most
similar to the question first, the engine's embedder). Reported: *evidence retained* (the planted
message reaches the model Full or Compressed) and *Full verbatim*; for constraints and preferences,
*verbatim* (their exact text is sent); refusals (``BudgetTooSmall``); tokens sent; build time.
Writes docs/benchmarks/long.md, long_results.json and long_retention.png.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from afm_local import AFMConfig, ArtifactCache, BudgetTooSmall, FocusManager, local_components
from afm_local.core.baselines import naive_replay, top_k_similarity
from afm_local.core.protocols import Components
from scripts.common import OUT_DIR
from scripts.corpora import Turn, dialogues, split_of

PREAMBLE = "You are a helpful personal assistant with a long memory of our chats."
ACK = "Noted, I'll keep that in mind."

# Our own planted messages: (message, question, key terms). Facts are RELEVANT information; constraints
# and preferences are what the user set and every later answer must respect.
FACTS = [
    ("By the way, my sister Olga moved to Porto last month for a job at a bakery.", "Where did my sister move to, and what does she do there?", ["Porto", "bakery"]),
    ("Our dog is called Biscuit, he's a three-year-old beagle who hates the vacuum cleaner.", "What is my dog's name and what breed is he?", ["Biscuit", "beagle"]),
    ("Our team project is codenamed Bluebird and the launch date is the 3rd of June.", "What is the codename of our team project and when does it launch?", ["Bluebird", "June"]),
    ("I parked the car on level 4 of the Riverside garage, spot 47, remember that for me.", "Where did I park the car?", ["level 4", "47"]),
    ("The one book I reread every year is The Dispossessed by Ursula Le Guin.", "Which book do I reread every year?", ["Dispossessed"]),
    ("I booked the dentist for Thursday the 14th at 9:30 with Dr. Mendes.", "When is my dentist appointment, and with which doctor?", ["14th", "Mendes"]),
    ("My landlord Mr. Okafor agreed to lower the rent to 1,150 euros from September.", "What rent did my landlord agree to, and from when?", ["1,150", "September"]),
    ("For the Valencia marathon I'm aiming to finish in 3 hours 45 minutes.", "What is my target time for the marathon, and which race is it?", ["3 hours 45", "Valencia"]),
    ("The Wi-Fi code at the cabin is written on a card taped under the kettle.", "Where can I find the Wi-Fi code at the cabin?", ["kettle"]),
    ("My manager Priya wants the quarterly deck in Google Slides, not PowerPoint.", "Which format does my manager want for the quarterly deck?", ["Google Slides"]),
    ("Grandma's soup secret is smoked paprika and a splash of cider vinegar at the end.", "What is the secret in grandma's soup recipe?", ["paprika", "cider vinegar"]),
    ("I switched my phone plan to Mobilink: 30 GB for 19 euros a month.", "Which phone plan did I switch to, and what does it cost?", ["Mobilink", "19 euros"]),
    ("My daughter Mia plays the fox in the school play on the 22nd.", "Which role does my daughter play in the school play, and when is it?", ["fox", "22nd"]),
    ("We chose the hexagonal sage-green kitchen tiles from Azulejo Studio.", "Which kitchen tiles did we choose?", ["hexagonal", "sage-green"]),
    ("My bike is a blue Gazelle city bike, and I keep it in the courtyard shed.", "What kind of bike do I have and where do I keep it?", ["Gazelle", "shed"]),
    ("My best friend Tomas is getting married in Ljubljana on 9 August.", "Where and when is my best friend's wedding?", ["Ljubljana", "9 August"]),
]
CONSTRAINTS = [
    ("I'm severely allergic to shellfish, so please never suggest anything with shrimp, crab or lobster.", "Can you suggest a restaurant for a seafood dinner tonight?"),
    ("I refuse to fly, so any trip you plan for me has to be by train, bus or car.", "How should I get from Berlin to Rome next month?"),
    ("Our wedding budget is strictly 8,000 euros in total and we cannot go over it.", "Which kinds of wedding venues should we look at?"),
    ("I'm vegetarian and I don't eat fish either, keep that in mind for every recipe.", "What should I cook for a dinner party this weekend?"),
    ("I use a wheelchair, so every place you suggest must have step-free access.", "Which museums should we visit in Lisbon?"),
    ("I'm seven months pregnant, so nothing strenuous or risky for me, please.", "What activities can we do on our beach holiday?"),
    ("The grant report must be submitted no later than Friday the 14th at noon; there is no extension.", "How should I plan my week?"),
    ("I can't swim, so please keep water activities off any plan you make for me.", "What can we do in Bali for three days?"),
    ("I cannot stand spicy food at all, so keep anything hot off my plate.", "What should I order at the Thai restaurant tonight?"),
    ("I'm on warfarin, so anything that interacts with blood thinners is off the table for me.", "Which painkiller can I take for a headache?"),
    ("Please never schedule anything for me before 10 am, I work night shifts.", "Can you draft a schedule for my errands tomorrow?"),
    ("I don't drink alcohol at all, I'm in recovery, so no bars or wine tastings.", "What should we do for my birthday evening?"),
]
MIX = {"topical_chat": 0.45, "multiwoz22": 0.2, "sgd": 0.15, "casino": 0.15, "oasst_en100": 0.05}
STRATEGIES = ("afm", "afm_paper", "recency", "topk")


@dataclass
class Probe:
    """One planted message and the question asked about it at the end."""

    kind: str  # "fact", "constraint" or "preference"
    index: int
    question: str
    keys: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    messages: list[dict[str, str]]
    probes: list[Probe]
    suite: str


def dialogue_pool(split: str, corpus: str) -> list[list[Turn]]:
    return [turns for did, turns in dialogues(corpus).items() if split_of(corpus, did) == split and len(turns) >= 2]


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
        probes.append(Probe(kind, pos, plant[1], list(plant[2]) if kind == "fact" else []))
    shift = 0
    for p in sorted(probes, key=lambda p: p.index):  # later insertions moved the earlier ones' successors
        p.index += shift
        shift += 2
    return Conversation(messages, probes, "long")


def preference_item(rng: random.Random, exchanges: list[list[Turn]], k: int) -> Conversation:
    """A stated preference, ten long unrelated real exchanges, then the question it must shape."""
    statement, question = CONSTRAINTS[k % len(CONSTRAINTS)]
    messages = [{"role": "user", "content": statement}, {"role": "assistant", "content": ACK}]
    for pair in rng.sample(exchanges, 10):
        messages += [{"role": t.role, "content": t.text} for t in pair]
    return Conversation(messages, [Probe("preference", 0, question)], "prefs")


def long_exchanges(split: str) -> list[list[Turn]]:
    out = []
    for corpus in ("oasst_en100", "dolly_subset"):
        for turns in dialogue_pool(split, corpus):
            pair = turns[:2]
            if [t.role for t in pair] == ["user", "assistant"] and len(pair[1].text) > 600:
                out.append(pair)
    return out


def run_strategy(name: str, fm: FocusManager, conv: Conversation, probe: Probe, budget: int,
                 comps: Components) -> dict:
    """Build one context; say what happened to the probe's message."""
    msgs, i = conv.messages, probe.index
    row: dict = {"strategy": name, "budget": budget, "kind": probe.kind, "suite": conv.suite, "age": len(msgs) - i}
    if name in ("recency", "topk"):
        if name == "recency":
            ctx = naive_replay(msgs, probe.question, budget, counter=comps.counter, preamble=PREAMBLE)
        else:
            ctx = top_k_similarity(msgs, probe.question, budget, counter=comps.counter, preamble=PREAMBLE,
                                   similarity=fm.similarity(probe.question))
        form, sent, used, ms = ctx.fidelities.get(i, "dropped"), ctx.messages, ctx.tokens_used, None
    else:
        try:
            t = time.perf_counter()
            ctx = fm.build_context(probe.question, budget, PREAMBLE)
            ms = (time.perf_counter() - t) * 1000
        except BudgetTooSmall as exc:
            return {**row, "refused": True, "minimum": exc.minimum, "form": "refused", "retained": False,
                    "verbatim": False, "keys": False, "tokens": 0, "ms": None}
        form, sent, used = ctx.items[i].fidelity.value, ctx.messages, ctx.tokens_used
    body = "\n".join(m["content"] for m in sent)
    return {**row, "refused": False, "form": form, "retained": form in ("full", "compressed"),
            "verbatim": msgs[i]["content"] in body, "keys": all(k in body for k in probe.keys), "tokens": used, "ms": ms}


def evaluate(convs: list[Conversation], budgets: list[int], comps: Components, configs: dict[str, AFMConfig]) -> list[dict]:
    cache = ArtifactCache()
    rows = []
    for n, conv in enumerate(convs):
        managers = {}
        for name, cfg in configs.items():
            fm = FocusManager(cfg, components=comps, cache=cache)
            fm.add_messages(conv.messages)
            managers[name] = fm
        for probe in conv.probes:
            for budget in budgets:
                for name in STRATEGIES:
                    fm = managers.get(name, managers["afm"])
                    rows.append({"conversation": n, **run_strategy(name, fm, conv, probe, budget, comps)})
    return rows


def pct(sel: list[dict], key: str) -> str:
    return f"{100 * sum(r[key] for r in sel) / len(sel):.0f}%" if sel else "–"


def tables(rows: list[dict], budgets: list[int]) -> list[str]:
    out = []
    for suite, kinds in (("long", ("fact", "constraint")), ("prefs", ("preference",))):
        sel = [r for r in rows if r["suite"] == suite]
        if not sel:
            continue
        head = "| strategy | budget | " + " | ".join(
            f"{k}s retained | {k}s Full verbatim" if k == "fact" else f"{k}s verbatim" for k in kinds
        ) + " | refusals | tokens sent (mean) | build ms (median) |"
        out += [f"### {suite}", "", head, "|" + "---|" * (head.count("|") - 1)]
        for name in STRATEGIES:
            for b in budgets:
                rs = [r for r in sel if r["strategy"] == name and r["budget"] == b]
                cells = []
                for k in kinds:
                    kr = [r for r in rs if r["kind"] == k]
                    if k == "fact":
                        cells += [pct(kr, "retained"), pct([dict(r, fv=r["form"] == "full") for r in kr], "fv")]
                    else:
                        cells.append(pct(kr, "verbatim"))
                ms = [r["ms"] for r in rs if r["ms"] is not None]
                tokens = statistics.mean(r["tokens"] for r in rs if not r["refused"]) if any(not r["refused"] for r in rs) else 0
                out.append(f"| {name} | {b} | " + " | ".join(cells) + f" | {sum(r['refused'] for r in rs)}/{len(rs)} | "
                           f"{tokens:.0f} | " + (f"{statistics.median(ms):.1f}" if ms else "–") + " |")
        out.append("")
    return out


def plot(rows: list[dict], budgets: list[int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, (suite, kind, key, title) in zip(axes, (("long", "fact", "retained", "facts retained (Full/Compressed)"),
                                                  ("prefs", "preference", "verbatim", "preference verbatim"))):
        for name in STRATEGIES:
            ys = []
            for b in budgets:
                rs = [r for r in rows if r["suite"] == suite and r["kind"] == kind and r["strategy"] == name and r["budget"] == b]
                ys.append(100 * sum(r[key] for r in rs) / len(rs) if rs else np.nan)
            ax.plot(budgets, ys, marker="o", label=name)
        ax.set_xscale("log")
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.set_title(title)
        ax.set_xlabel("budget (tokens)")
    axes[0].set_ylabel("%")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(OUT_DIR / "long_retention.png", dpi=110)
    plt.close(fig)


def parse_overrides(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key] = None if value == "none" else json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=["long", "prefs", "all"], default="all")
    ap.add_argument("--split", choices=["dev", "test"], default="test")
    ap.add_argument("--conversations", type=int, default=6)
    ap.add_argument("--turns", type=int, default=600)
    ap.add_argument("--preferences", type=int, default=100)
    ap.add_argument("--budgets", default="500,1000,2000,4000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--config", nargs="*", default=[], help="AFMConfig overrides for the afm strategy (tuning on dev)")
    ap.add_argument("--out", default="long", help="basename of the written files under docs/benchmarks/")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    t0 = time.time()
    rng = random.Random(f"{args.seed}:{args.split}")
    convs: list[Conversation] = []
    if args.suite in ("long", "all"):
        convs += [long_conversation(rng, args.split, args.turns) for _ in range(args.conversations)]
    if args.suite in ("prefs", "all"):
        exchanges = long_exchanges(args.split)
        convs += [preference_item(rng, exchanges, k) for k in range(args.preferences)]
    comps = local_components(threads=1)
    configs = {"afm": AFMConfig(**parse_overrides(args.config)), "afm_paper": AFMConfig.paper()}
    rows = evaluate(convs, budgets, comps, configs)
    lines = tables(rows, budgets)
    print("\n".join(lines))
    plot(rows, budgets)
    wall = time.time() - t0
    sizes = [len(c.messages) for c in convs if c.suite == "long"]
    result = {"args": vars(args), "classifier": comps.classifier.name, "embedder": comps.embedder.name,
              "config": configs["afm"].model_dump(), "rows": rows, "wall_s": wall, "long_sizes": sizes}
    (OUT_DIR / f"{args.out}_results.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    md = [
        "# Long conversations from real dialogue", "",
        f"Command: `.venv/bin/python -m scripts.bench_long --split {args.split} --conversations {args.conversations} "
        f"--turns {args.turns} --preferences {args.preferences} --budgets {args.budgets} --seed {args.seed}`"
        + (f" `--config {' '.join(args.config)}`" if args.config else "") + f" (wall {wall:.0f} s; classifier "
        f"`{comps.classifier.name}`, embedder `{comps.embedder.name}`).", "",
        f"`long`: {len(sizes)} conversations of {min(sizes, default=0)}–{max(sizes, default=0)} messages stitched from whole "
        "real dialogues (Topical-Chat, MultiWOZ, SGD, CaSiNo, OpenAssistant; ../shared/corpora, "
        f"`{args.split}` split of the labelling sample), 8 facts and 2 constraints of our own planted at user turns, one "
        "question per planted message asked at the end. `prefs`: a stated preference, ten long real OpenAssistant/Dolly "
        "exchanges, then a question the preference must shape. *retained*: the message reaches the model Full or "
        "Compressed; *verbatim*: its exact text is sent. `afm` is `AFMConfig()`"
        + (f" with {', '.join(args.config)}" if args.config else "") + "; `afm_paper` is `AFMConfig.paper()`; `topk` sends "
        "whole messages most similar to the question first (the engine's embedder); `recency` the newest messages that fit.",
        "", *lines, "![retention](long_retention.png)", "",
    ]
    (OUT_DIR / f"{args.out}.md").write_text("\n".join(md), encoding="utf-8")
    print(f"wall {wall:.0f} s")


if __name__ == "__main__":
    main()
