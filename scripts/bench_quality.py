"""Model-free quality benchmark: do the constraint messages reach the model verbatim?

    .venv/bin/python -m scripts.bench_quality [--budgets 300,500,800,1200] [--reps 3] [--limit N]

For every scenario in ``data/scenarios/`` (``scripts/make_scenarios.py``), every strategy and every
budget, build the context and check that each constraint message's full text is in what is sent; for
the structured render it must also sit in the first system message's CRITICAL block. A run is a
pass only if every constraint passes. ``BudgetTooSmall`` (the budget cannot hold the preamble, the
query and the CRITICAL messages) is counted separately, never as a pass. Also records tokens sent
and the median build latency over ``--reps`` warm repetitions (caches filled by a first build).

Strategies: ``afm`` (ours: packing afm, structured render), ``afm_paper`` (packing paper, chat
render), the three baselines (``afm_local.core.baselines``) and the paper's ablations, each in both
modes: no classifier (everything RELEVANT), no placeholders, no compression.

Writes ``docs/benchmarks/quality.md``, ``quality_results.json`` and ``quality_*.png``; the headline
table (``docs/benchmarks/headline.md``) is rewritten from whatever results exist.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from afm_local import AFMConfig, ArtifactCache, BudgetTooSmall, Components, FocusManager, local_components
from afm_local.core.baselines import naive_replay, recency_compression, stateless
from afm_local.core.types import Classification, Utterance
from afm_local.core.vocabulary import Importance
from scripts.common import OUT_DIR, constraints_verbatim, isa, load_scenarios, write_headline

STRATEGIES = [
    # name, kind, config key (CONFIGS; components "no_classifier" for the no-classifier ablations), render
    ("afm", "engine", "default", "structured"),
    ("afm_paper", "engine", "paper", "chat"),
    ("stateless", "baseline", None, None),
    ("naive_replay", "baseline", None, None),
    ("recency_compression", "baseline", None, None),
    ("no_classifier", "engine", "no_classifier", "structured"),
    ("no_placeholders", "engine", "no_placeholders", "structured"),
    ("no_compression", "engine", "no_compression", "structured"),
    ("no_classifier_paper", "engine", "no_classifier_paper", "chat"),
    ("no_placeholders_paper", "engine", "no_placeholders_paper", "chat"),
    ("no_compression_paper", "engine", "no_compression_paper", "chat"),
]


class AllRelevant:
    """The "no classifier" ablation: every message is RELEVANT, so nothing is protected."""

    name = "all-relevant"

    def classify(self, items: Sequence[Utterance]) -> list[Classification]:
        return [Classification(Importance.RELEVANT, {"RELEVANT": 1.0}, "default") for _ in items]


def build_components(comps: Components) -> dict[str, Components]:
    """The components each config key runs with: the no-classifier ablations swap in ``AllRelevant``."""
    blind = Components(comps.counter, comps.embedder, AllRelevant(), comps.compressor, comps.topicer, comps.abstractive)
    return {key: blind if key.startswith("no_classifier") else comps for key in CONFIGS}


CONFIGS = {  # the default (best measured) configuration and the paper's, each with the paper's ablations
    "default": AFMConfig(),
    "no_classifier": AFMConfig(),
    "no_placeholders": AFMConfig(use_placeholders=False),
    "no_compression": AFMConfig(use_compression=False),
    "paper": AFMConfig.paper(),
    "no_classifier_paper": AFMConfig.paper(),
    "no_placeholders_paper": AFMConfig.paper(use_placeholders=False),
    "no_compression_paper": AFMConfig.paper(use_compression=False),
}


def run_one(
    sc: dict, strategy: tuple, budget: int, managers: dict[str, FocusManager], comps: Components, reps: int
) -> dict:
    name, kind, key, render = strategy
    hist, q, pre = sc["messages"], sc["query"], sc["preamble"]
    row = {
        "scenario": sc["id"],
        "family": sc["family"],
        "language": sc["language"],
        "placement": sc["placement"],
        "wording": sc["wording"],
        "strategy": name,
        "budget": budget,
    }

    def build():
        if kind == "engine":
            return managers[key].build_context(
                current_query=q, budget_tokens=budget, system_preamble=pre, render=render
            )
        if name == "stateless":
            return stateless(hist, q, budget, counter=comps.counter, preamble=pre)
        if name == "naive_replay":
            return naive_replay(hist, q, budget, counter=comps.counter, preamble=pre)
        return recency_compression(hist, q, budget, counter=comps.counter, compressor=comps.compressor, preamble=pre)

    try:
        ctx = build()
    except BudgetTooSmall as exc:
        row.update(
            status="budget_too_small",
            minimum=exc.minimum,
            passed=False,
            anywhere=False,
            keyword=False,
            tokens=None,
            ms=None,
        )
        return row
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        ctx = build()
        times.append((time.perf_counter() - t0) * 1000)
    strict, anywhere = constraints_verbatim(sc, ctx.messages, render == "structured")
    history_text = "\n".join(m["content"] for m in ctx.messages[:-1]).replace(pre, "", 1).lower()
    keyword = any(k.lower() in history_text for k in sc["grader"]["recall_any"])
    row.update(
        status="ok",
        passed=strict,
        anywhere=anywhere,
        keyword=keyword,
        tokens=ctx.tokens_used,
        ms=statistics.median(times) if times else None,
    )
    assert ctx.tokens_used <= budget or kind == "baseline", (sc["id"], name, budget, ctx.tokens_used)
    return row


def summarise(rows: list[dict], strategies: list[str], budgets: list[int], family_filter=None) -> dict:
    out: dict = {}
    for s in strategies:
        for b in budgets:
            sel = [
                r
                for r in rows
                if r["strategy"] == s and r["budget"] == b and (family_filter is None or family_filter(r))
            ]
            if not sel:
                continue
            ok = [r for r in sel if r["status"] == "ok"]
            out[(s, b)] = {
                "n": len(sel),
                "pass": sum(r["passed"] for r in sel),
                "anywhere": sum(r["anywhere"] for r in sel),
                "keyword": sum(r["keyword"] for r in sel),
                "too_small": len(sel) - len(ok),
                "tokens": statistics.mean(r["tokens"] for r in ok) if ok else None,
                "ms": statistics.median(r["ms"] for r in ok if r["ms"] is not None) if ok else None,
            }
    return out


def table(summary: dict, strategies: list[str], budgets: list[int], what: str = "pass") -> str:
    head = "| strategy | " + " | ".join(f"{b} tok" for b in budgets) + " |"
    lines = [head, "|" + "---|" * (len(budgets) + 1)]
    for s in strategies:
        cells = []
        for b in budgets:
            v = summary.get((s, b))
            if v is None:
                cells.append("–")
                continue
            if what == "pass":
                cell = f"{v['pass']}/{v['n']} ({100 * v['pass'] / v['n']:.0f}%)"
                if v["too_small"]:
                    cell += f" · {v['too_small']} too small"
            elif what == "anywhere":
                cell = f"{v['anywhere']}/{v['n']}"
            elif what == "keyword":
                cell = f"{v['keyword']}/{v['n']}"
            elif what == "tokens":
                cell = "–" if v["tokens"] is None else f"{v['tokens']:.0f}"
            else:
                cell = "–" if v["ms"] is None else f"{v['ms']:.2f}"
            cells.append(cell)
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(summary: dict, strategies: list[str], budgets: list[int], path: Path, title: str, what: str = "pass") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(11, 5.2))
    width = 0.8 / len(strategies)
    x = np.arange(len(budgets))
    for k, s in enumerate(strategies):
        vals = []
        for b in budgets:
            v = summary.get((s, b))
            if v is None:
                vals.append(0)
            elif what == "pass":
                vals.append(100 * v["pass"] / v["n"])
            else:
                vals.append(v["tokens"] or 0)
        ax.bar(x + k * width - 0.4 + width / 2, vals, width, label=s)
    ax.set_xticks(x, [f"{b}" for b in budgets])
    ax.set_xlabel("token budget")
    ax.set_ylabel("constraints verbatim (% of runs)" if what == "pass" else "tokens sent (mean)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- headline


def findings(s_allergy, s_explicit, s_other, budgets, n_implicit, classifier) -> str:
    def p(summary, s, b):
        v = summary.get((s, b))
        return f"{100 * v['pass'] / v['n']:.0f}%" if v else "–"

    lo, hi = budgets[0], budgets[-1]

    def small(summary, s, b):
        v = summary.get((s, b))
        return f"{v['too_small']}/{v['n']}" if v else "–"

    if classifier == "rules":
        first = (
            "* **AFM (ours)** fails exactly where the classifier does not mark the constraint CRITICAL: with "
            f"`{classifier}`, the {n_implicit} implicit wordings (no allergy keyword) stay RELEVANT, decay, and become "
            "placeholders. "
        )
    elif any(v["too_small"] for (s, _), v in s_allergy.items() if s == "afm"):
        first = (
            f"* **AFM (ours)** with `{classifier}`: the trained model also catches the implicit wordings, but it marks "
            "many ordinary messages CRITICAL too, so at tight budgets the CRITICAL set alone exceeds the budget and "
            f"the engine refuses with `BudgetTooSmall` (allergy: {small(s_allergy, 'afm', lo)} runs at {lo} tokens, "
            f"{small(s_allergy, 'afm', budgets[1])} at {budgets[1]}). That is a classifier precision problem, not a "
            "packing one; compare quality_rules.md. "
        )
    else:
        first = (
            f"* **AFM (ours)** with `{classifier}`: the trained model also catches the implicit wordings, and no build "
            f"is refused with `BudgetTooSmall` at any budget: the CRITICAL set it marks fits even {lo} tokens. "
        )
    return "\n".join(
        [
            first + f"On explicit wordings it is "
            f"{p(s_explicit, 'afm', lo)} at {lo} tokens and {p(s_explicit, 'afm', hi)} at {hi}; on the other families "
            f"{p(s_other, 'afm', lo)} at {lo} and {p(s_other, 'afm', hi)} at {hi}. It never exceeds the budget.",
            f"* **AFM paper mode** (greedy oldest→newest, chat render): {p(s_allergy, 'afm_paper', lo)} / "
            f"{p(s_allergy, 'afm_paper', budgets[1])} at {lo} / {budgets[1]} tokens vs {p(s_allergy, 'afm', lo)} / "
            f"{p(s_allergy, 'afm', budgets[1])} for ours. Where every run builds (the rule classifier, "
            "quality_rules.md), greedy packing loses late constraints at tight budgets: earlier messages spend the "
            "budget before the CRITICAL one is reached. The chat render's fixed cost is smaller than the structured "
            "one's, so it raises `BudgetTooSmall` slightly less often.",
            f"* **Naive replay** is {p(s_allergy, 'naive_replay', lo)} at {lo} tokens but "
            f"{p(s_allergy, 'naive_replay', hi)} at {hi}: our generated chats are 550–1,400 tokens, so a large window "
            "simply holds all of them. The paper's 0/30 reflects a conversation longer than the window; at budgets "
            "below the chat length we reproduce it.",
            "* **Recency compression** never passes the verbatim test: the old constraint is compressed like any other "
            "message (the keyword table shows whether the compressed form still names the allergen).",
            "* **No classifier** is 0% everywhere, as in the paper: everything is RELEVANT, the constraint decays to a "
            "placeholder.",
            "* **No placeholders / no compression** do not hurt ours, because the afm packer reserves CRITICAL "
            "messages at Full before anything else; the paper's drops (70%, 80%) are a property of greedy packing. In "
            f"paper mode (vs {p(s_allergy, 'afm_paper', lo)} / {p(s_allergy, 'afm_paper', budgets[1])} at {lo} / "
            f"{budgets[1]} tokens), removing compression gives {p(s_allergy, 'no_compression_paper', lo)} / "
            f"{p(s_allergy, 'no_compression_paper', budgets[1])}, while removing placeholders frees budget and gives "
            f"{p(s_allergy, 'no_placeholders_paper', lo)} / {p(s_allergy, 'no_placeholders_paper', budgets[1])}: "
            "unlike the paper, placeholders cost more than they protect when the constraint itself must arrive "
            "verbatim.",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="300,500,800,1200")
    ap.add_argument("--reps", type=int, default=3, help="timed warm repetitions per build")
    ap.add_argument("--limit", type=int, default=None, help="first N scenarios only")
    ap.add_argument("--headline-budget", type=int, default=500)
    ap.add_argument(
        "--classifier",
        choices=["installed", "rules"],
        default="installed",
        help=(
            "installed: whatever local_components() loads (the trained model when present); rules: the rule layer alone"
        ),
    )
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    t_start = time.time()
    comps = local_components(threads=1)
    if args.classifier == "rules":
        from afm_local.text.classifier import LayeredClassifier

        comps = Components(
            comps.counter, comps.embedder, LayeredClassifier(None), comps.compressor, comps.topicer, comps.abstractive
        )
    tag = "" if args.classifier == "installed" else "_rules"
    variants = build_components(comps)
    cache = ArtifactCache()
    scenarios = load_scenarios(args.limit)
    print(f"{len(scenarios)} scenarios, classifier: {comps.classifier.name}", flush=True)
    rows = []
    for sc in scenarios:
        managers = {}
        for key, cfg in CONFIGS.items():
            fm = FocusManager(cfg, components=variants[key], cache=cache)
            fm.add_messages(sc["messages"])
            managers[key] = fm
        for strategy in STRATEGIES:
            for b in budgets:
                rows.append(run_one(sc, strategy, b, managers, comps, args.reps))
    names = [s[0] for s in STRATEGIES]
    is_allergy = lambda r: r["family"] == "allergy"  # noqa: E731
    s_all = summarise(rows, names, budgets)
    s_allergy = summarise(rows, names, budgets, is_allergy)
    s_explicit = summarise(rows, names, budgets, lambda r: is_allergy(r) and r["wording"] == "explicit")
    s_late = summarise(rows, names, budgets, lambda r: is_allergy(r) and r["placement"] == "late")
    s_tax = summarise(rows, names, budgets, lambda r: r["family"] == "tax")
    s_other = summarise(rows, names, budgets, lambda r: r["family"] != "allergy")
    n_allergy = sum(1 for s in scenarios if s["family"] == "allergy")
    n_implicit = sum(1 for s in scenarios if s["family"] == "allergy" and s["wording"] == "implicit")
    n_late = sum(1 for s in scenarios if s["family"] == "allergy" and s["placement"] == "late")
    fams = sorted({s["family"] for s in scenarios})

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    plot(
        s_allergy,
        names[:8],
        budgets,
        OUT_DIR / f"quality{tag}_allergy.png",
        f"Allergy trip ({n_allergy} variants): constraint reaches the model verbatim",
    )
    plot(
        s_other,
        names[:8],
        budgets,
        OUT_DIR / f"quality{tag}_other.png",
        "Other constraint types (tax, marketplace, medication, ...): constraint verbatim",
    )
    plot(
        s_allergy,
        names[:8],
        budgets,
        OUT_DIR / f"quality{tag}_tokens.png",
        "Allergy trip: tokens sent (mean)",
        what="tokens",
    )

    def dump(summary):
        return {f"{k[0]}|{k[1]}": v for k, v in summary.items()}

    res = {
        "classifier": comps.classifier.name,
        "budgets": budgets,
        "headline_budget": args.headline_budget,
        "strategies": names,
        "n_scenarios": len(scenarios),
        "n_allergy": n_allergy,
        "n_implicit": n_implicit,
        "summary_all": dump(s_all),
        "summary_allergy": dump(s_allergy),
        "summary_allergy_explicit": dump(s_explicit),
        "summary_allergy_late": dump(s_late),
        "summary_tax": dump(s_tax),
        "summary_other": dump(s_other),
        "rows": rows,
    }
    (OUT_DIR / f"quality_results{tag}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")

    md = [
        "# Quality benchmark (model-free): do constraints reach the model verbatim?",
        "",
        f"Command: `.venv/bin/python -m scripts.bench_quality --budgets {args.budgets} --reps {args.reps} --classifier "
        f"{args.classifier}` (scenarios from `scripts/make_scenarios.py`, seed in `data/scenarios/index.json`). "
        f"Runtime {time.time() - t_start:.0f} s on {isa()}.",
        "",
        f"* Importance classifier used: **`{comps.classifier.name}`** (`local_components(threads=1)`; `rules` means "
        "the trained ONNX model was not installed and the rule layer stood alone).",
        f"* Scenarios: {len(scenarios)} ({', '.join(fams)}); allergy variants: {n_allergy}, of which {n_late} place "
        f'the allergy late and {n_implicit} word it without an allergy keyword ("I can\'t eat peanuts at all...").',
        "* A run passes when every constraint message's full text is in the sent messages; for the structured render "
        "it must be inside the first system message's CRITICAL block. `too small` = `BudgetTooSmall` (budget cannot "
        "hold preamble, query and CRITICAL messages); counted in n, never a pass. Baselines never raise; they send "
        "what fits.",
        "* Ablations: `no_classifier` = every message RELEVANT; `no_placeholders` = "
        "`AFMConfig(use_placeholders=False)`; `no_compression` = `AFMConfig(use_compression=False)`; plain names use "
        "the default configuration `AFMConfig()` with the structured render, `_paper` names `AFMConfig.paper()` (the "
        "paper exactly: greedy oldest→newest packing, intended forms only, `BudgetTooSmall` on overflow) with the chat "
        "render.",
        "",
        "## Allergy trip: pass rate",
        "",
        table(s_allergy, names, budgets),
        "",
        f"![allergy](quality{tag}_allergy.png)",
        "",
        "## Allergy trip, explicit wording only",
        "",
        table(s_explicit, names, budgets),
        "",
        "## Allergy trip, constraint placed late",
        "",
        table(s_late, names, budgets),
        "",
        "## Tax compliance (EN + RU)",
        "",
        table(s_tax, names, budgets),
        "",
        "## All non-allergy scenarios (tax, marketplace, warfarin, pregnancy, wheelchair, GDPR, halal, "
        "deadline; EN + RU)",
        "",
        table(s_other, names, budgets),
        "",
        f"![other](quality{tag}_other.png)",
        "",
        "## All scenarios: constraint verbatim anywhere in the sent messages (ignoring the CRITICAL-block requirement)",
        "",
        table(s_all, names, budgets, "anywhere"),
        "",
        "## Allergy trip: constraint keyword (e.g. 'peanut', 'allerg') anywhere in the sent history, any form",
        "",
        "A softer, secondary check: a compressed constraint or a placeholder that names the allergen counts here.",
        "",
        table(s_allergy, names, budgets, "keyword"),
        "",
        "## Reading the numbers",
        "",
        findings(s_allergy, s_explicit, s_other, budgets, n_implicit, comps.classifier.name),
        "",
        "## Tokens sent (mean over runs that built, allergy)",
        "",
        table(s_allergy, names, budgets, "tokens"),
        "",
        f"![tokens](quality{tag}_tokens.png)",
        "",
        f"## Build latency, median ms (warm caches, {args.reps} reps, 1 thread; allergy)",
        "",
        table(s_allergy, names, budgets, "ms"),
        "",
    ]
    (OUT_DIR / f"quality{tag}.md").write_text("\n".join(md), encoding="utf-8")
    write_headline()
    print("\n## Allergy pass rate\n" + table(s_allergy, names, budgets))
    print("\n## Non-allergy pass rate\n" + table(s_other, names, budgets))
    print("\n## Tokens (allergy)\n" + table(s_allergy, names, budgets, "tokens"))
    print("\n## Latency ms (allergy)\n" + table(s_allergy, names, budgets, "ms"))
    print(f"\nwrote {OUT_DIR / f'quality{tag}.md'} in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
