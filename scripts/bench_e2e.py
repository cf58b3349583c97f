"""End-to-end benchmark: packed contexts through a local GGUF model, answers graded by rules.

    .venv/bin/python -m scripts.bench_e2e [--budget 400] [--allergy 2] [--others tax_en_0_early,marketplace_ru_example]
        [--models qwen,smollm] [--max-tokens 120] [--time-limit 480] [--tag default]

Strategies: ``afm`` (packing afm, structured render), ``naive_replay`` and ``stateless``, all at one
budget. Each context goes through llama-cpp-python (``n_threads=1``, ``n_threads_batch=1``,
temperature 0, fixed seed). ``--time-limit`` stops launching new generations once the wall time is
spent, so the command is bounded; what finished is reported.

The grader (``grade``) is strict and transparent, per scenario (``grader`` in the scenario file):

* recall: the answer must contain one of ``recall_any`` (case-insensitive substring), i.e. mention
  the constraint;
* ``forbid_unflagged``: a forbidden term (a dish with the allergen, ibuprofen with warfarin, a US
  region under GDPR...) may appear only in a sentence that also carries a caution word ("avoid",
  "without", "ask", ...); otherwise the answer recommends it and fails;
* ``require_any``: one of the terms must appear (a refusal marker for the illegal tax request, an
  accessibility word, the deadline date, an EU region);
* ``max_amount``: no money amount above the cap (300 000 roubles).

A pass needs recall AND every rule. ``data/scenarios/hand_graded.jsonl`` holds answers graded by
hand; the grader's error rate against them is reported. Writes ``docs/benchmarks/e2e.md`` (or
``e2e_<tag>.md``) and ``e2e_results.json``; the headline table is rewritten.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path

from afm_local import AFMConfig, ArtifactCache, BudgetTooSmall, FocusManager, local_components
from afm_local.core.baselines import naive_replay, stateless
from scripts.common import OUT_DIR, SCEN_DIR, constraints_verbatim, load_scenarios, write_headline

MODELS = {
    "qwen": ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
    "smollm": ("smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_OTHERS = "tax_en_0_early,marketplace_ru_example"
HAND = SCEN_DIR / "hand_graded.jsonl"

_SENT = re.compile(r"(?<=[.!?])\s+|\n+")
_AMOUNT = re.compile(
    r"(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+(?:[.,]\d+)?)\s*(млн|миллион\w*|тыс\w*|k\b|к\b|000\b)?\s*(₽|руб\w*|р\.)?",
    re.IGNORECASE,
)


def amounts(text: str) -> list[float]:
    """Money amounts in roubles: a number followed by a multiplier (тыс, млн, k) or a currency."""
    out = []
    for m in _AMOUNT.finditer(text):
        num, mult, cur = m.group(1), (m.group(2) or "").lower(), m.group(3)
        if not mult and not cur:
            continue
        try:
            value = float(num.replace(" ", "").replace("\u00a0", "").replace("\u202f", "").replace(",", "."))
        except ValueError:
            continue
        if mult.startswith("млн") or mult.startswith("миллион"):
            value *= 1_000_000
        elif mult.startswith("тыс") or mult in ("k", "к"):
            value *= 1_000
        elif mult == "000":
            value *= 1_000
        out.append(value)
    return out


def grade(answer: str, grader: dict) -> dict:
    """Strict keyword/rule grade: ``{"recall", "condition", "pass", "why"}``."""
    low = answer.lower()
    recall = any(k.lower() in low for k in grader["recall_any"])
    why = [] if recall else ["no recall"]
    sentences = [s.lower() for s in _SENT.split(answer) if s.strip()]
    for rule in grader["rules"]:
        if rule["type"] == "forbid_unflagged":
            caution = [c.lower() for c in rule["caution"]]
            for term in rule["terms"]:
                for s in sentences:
                    if term.lower() in s and not any(c in s for c in caution):
                        why.append(f"recommends '{term}'")
                        break
        elif rule["type"] == "require_any":
            if not any(t.lower() in low for t in rule["terms"]):
                why.append("missing required " + "/".join(rule["terms"][:3]) + "...")
        elif rule["type"] == "max_amount":
            over = [a for a in amounts(answer) if a > rule["cap"]]
            if over:
                why.append(f"amount over cap: {over[0]:.0f}")
    condition = not [w for w in why if w != "no recall"]
    return {"recall": recall, "condition": condition, "pass": recall and condition, "why": "; ".join(why)}


def pick(scenarios: list[dict], n_allergy: int, others: list[str]) -> list[dict]:
    """``n_allergy`` allergy variants spread over the list (early and late, every allergen), then named others."""
    allergy = [s for s in scenarios if s["family"] == "allergy"]
    step = max(1, len(allergy) // max(1, n_allergy))
    chosen = allergy[::step][:n_allergy]
    by_id = {s["id"]: s for s in scenarios}
    return chosen + [by_id[o] for o in others if o in by_id]


def load_llm(key: str):
    from llama_cpp import Llama

    from afm_local.local.model_files import verified_path

    path = verified_path(*MODELS[key])
    return Llama(model_path=str(path), n_ctx=2048, n_threads=1, n_threads_batch=1, seed=0, verbose=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--allergy", type=int, default=2)
    ap.add_argument("--others", default=DEFAULT_OTHERS)
    ap.add_argument("--models", default="qwen,smollm")
    ap.add_argument("--strategies", default="afm,naive_replay,stateless")
    ap.add_argument("--max-tokens", type=int, default=120)
    ap.add_argument("--time-limit", type=float, default=480.0, help="seconds; no new generation starts after this")
    ap.add_argument("--tag", default="default", help="'default' writes e2e.md; anything else e2e_<tag>.md")
    ap.add_argument(
        "--from-results", default=None, help="re-grade and re-report a stored e2e_results*.json without running a model"
    )
    args = ap.parse_args()
    t0 = time.time()
    comps = local_components(threads=1)
    cache = ArtifactCache()
    scenarios = pick(load_scenarios(), args.allergy, [o for o in args.others.split(",") if o])
    strategies = args.strategies.split(",")
    print(
        f"{len(scenarios)} scenarios x {strategies} at {args.budget} tokens; classifier {comps.classifier.name}",
        flush=True,
    )

    stopped = False
    classifier_name = comps.classifier.name
    models = [m for m in args.models.split(",") if m]
    if args.from_results:
        old = json.loads(Path(args.from_results).read_text(encoding="utf-8"))
        rows, stopped = old["rows"], old.get("stopped_by_time_limit", False)
        classifier_name = old.get("classifier", "?")  # the classifier the answers were generated with
        models = sorted({r["model"] for r in rows}, key=[r["model"] for r in rows].index)
        strategies = sorted({r["strategy"] for r in rows}, key=[r["strategy"] for r in rows].index)
        graders = {sc["id"]: sc["grader"] for sc in load_scenarios()}
        for r in rows:  # re-grade the stored answers with the current grader
            if r["status"] == "ok":
                r.update(grade(r["answer"], graders[r["scenario"]]))
    else:
        contexts = {}
        for sc in scenarios:
            fm = FocusManager(AFMConfig(), components=comps, cache=cache)
            fm.add_messages(sc["messages"])
            for s in strategies:
                t = time.perf_counter()
                try:
                    if s == "afm":
                        fm.build_context(
                            current_query=sc["query"],
                            budget_tokens=args.budget,
                            system_preamble=sc["preamble"],
                            render="structured",
                        )
                        t = time.perf_counter()  # warm: time the second build
                        ctx = fm.build_context(
                            current_query=sc["query"],
                            budget_tokens=args.budget,
                            system_preamble=sc["preamble"],
                            render="structured",
                        )
                    elif s == "naive_replay":
                        ctx = naive_replay(
                            sc["messages"], sc["query"], args.budget, counter=comps.counter, preamble=sc["preamble"]
                        )
                    else:
                        ctx = stateless(
                            sc["messages"], sc["query"], args.budget, counter=comps.counter, preamble=sc["preamble"]
                        )
                except BudgetTooSmall:
                    contexts[(sc["id"], s)] = None
                    continue
                ms = (time.perf_counter() - t) * 1000
                verbatim, _ = constraints_verbatim(sc, ctx.messages, s == "afm")
                contexts[(sc["id"], s)] = (ctx.messages, ctx.tokens_used, ms, verbatim)

        rows = []
        for mkey in models:
            if stopped:
                break
            try:
                llm = load_llm(mkey)
            except Exception as exc:  # a missing model is reported, not fatal
                print(f"model {mkey} unavailable: {exc}", flush=True)
                continue
            for sc in scenarios:
                for s in strategies:
                    if time.time() - t0 > args.time_limit:
                        stopped = True
                        break
                    c = contexts.get((sc["id"], s))
                    if c is None:
                        rows.append(
                            {
                                "model": mkey,
                                "scenario": sc["id"],
                                "family": sc["family"],
                                "strategy": s,
                                "status": "budget_too_small",
                            }
                        )
                        continue
                    messages, tokens, ms, verbatim = c
                    t = time.perf_counter()
                    r = llm.create_chat_completion(
                        messages=messages, temperature=0.0, max_tokens=args.max_tokens, seed=0
                    )
                    llm_s = time.perf_counter() - t
                    answer = r["choices"][0]["message"]["content"] or ""
                    g = grade(answer, sc["grader"])
                    rows.append(
                        {
                            "model": mkey,
                            "scenario": sc["id"],
                            "family": sc["family"],
                            "strategy": s,
                            "status": "ok",
                            "tokens": tokens,
                            "prompt_tokens": r["usage"]["prompt_tokens"],
                            "build_ms": ms,
                            "llm_s": llm_s,
                            "verbatim": verbatim,
                            **g,
                            "answer": answer,
                            "query": sc["query"],
                        }
                    )
                    print(
                        f"[{time.time() - t0:5.0f}s] {mkey} {sc['id']} {s}: pass={g['pass']} recall={g['recall']} "
                        f"{g['why']} ({llm_s:.1f}s)",
                        flush=True,
                    )
                if stopped:
                    break
            del llm

    summary: dict = {}
    for mkey in models:
        summary[mkey] = {}
        for s in strategies:
            sel = [r for r in rows if r["model"] == mkey and r["strategy"] == s and r["status"] == "ok"]
            if not sel:
                continue
            summary[mkey][s] = {
                "n": len(sel),
                "pass": sum(r["pass"] for r in sel),
                "recall": sum(r["recall"] for r in sel),
                "verbatim": sum(r["verbatim"] for r in sel),
                "build_ms": statistics.median(r["build_ms"] for r in sel),
                "llm_s": statistics.median(r["llm_s"] for r in sel),
                "tokens": statistics.mean(r["tokens"] for r in sel),
            }
    summary = {m: v for m, v in summary.items() if v}

    # grader vs hand grades (the stored answers are re-graded, so the check does not depend on a rerun)
    hand = (
        [json.loads(line) for line in HAND.read_text(encoding="utf-8").splitlines() if line.strip()]
        if HAND.exists()
        else []
    )
    by_id = {s["id"]: s for s in load_scenarios()}
    disagreements, recall_dis = [], []
    for h in hand:
        g = grade(h["answer"], by_id[h["scenario"]]["grader"])
        if g["pass"] != h["hand_pass"]:
            disagreements.append((h, g))
        if g["recall"] != h["hand_recall"]:
            recall_dis.append((h, g))
    grader_error = (
        f"{len(disagreements)}/{len(hand)} ({100 * len(disagreements) / len(hand):.0f}%)"
        if hand
        else "n/a (no hand grades)"
    )
    recall_error = f"{len(recall_dis)}/{len(hand)} ({100 * len(recall_dis) / len(hand):.0f}%)" if hand else "n/a"
    hand_pass = sum(h["hand_pass"] for h in hand)

    tag = "" if args.tag == "default" else f"_{args.tag}"
    res = {
        "budget": args.budget,
        "models": list(summary),
        "strategies": strategies,
        "max_tokens": args.max_tokens,
        "classifier": classifier_name,
        "summary": summary,
        "rows": rows,
        "hand_n": len(hand),
        "grader_error": grader_error,
        "grader_recall_error": recall_error,
        "hand_pass": hand_pass,
        "stopped_by_time_limit": stopped,
        "wall_s": old["wall_s"] if args.from_results else time.time() - t0,
    }
    (OUT_DIR / f"e2e_results{tag}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")

    md = [
        f"# End-to-end benchmark{(' (' + args.tag + ')') if tag else ''}: local GGUF answers, strict rule grader",
        "",
        f"Command: `.venv/bin/python -m scripts.bench_e2e --budget {args.budget} --allergy {args.allergy} --others "
        f"{args.others} --models {args.models} --max-tokens {args.max_tokens} --time-limit {args.time_limit:.0f}"
        + (f" --tag {args.tag}" if tag else "")
        + "`",
        f"(wall {res['wall_s']:.0f} s{'; stopped early by --time-limit' if stopped else ''}"
        f"{'; this report was rebuilt from the stored answers with --from-results' if args.from_results else ''}). "
        "llama-cpp-python, n_threads=1, "
        "n_threads_batch=1, temperature 0, seed 0. Classifier: `" + classifier_name + "` (the trained importance model "
        "landed after these runs; with it, the allergy contexts at 400 tokens raise BudgetTooSmall, see quality.md).",
        "",
        "The model-free metric (quality.md) is the primary figure; this run checks what a small local model does with "
        "the context. A pass needs **recall** (the answer mentions the constraint) **and condition** (no forbidden "
        "item recommended without a caution in the same sentence; required refusal/accessibility/date/region terms "
        "present; no amount over the cap).",
        "",
        "| model | strategy | n | pass (recall AND condition) | recall | constraint verbatim in context | tokens sent "
        "| build ms (median) | LLM s (median) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m, per in summary.items():
        for s, v in per.items():
            md.append(
                f"| {m} | {s} | {v['n']} | {v['pass']}/{v['n']} | {v['recall']}/{v['n']} | {v['verbatim']}/{v['n']} | "
                f"{v['tokens']:.0f} | {v['build_ms']:.2f} | {v['llm_s']:.1f} |"
            )
    md += [
        "",
        "Per-turn latency = build_context (ms) + one LLM answer (s) on one CPU thread; the paper's pipeline took "
        "21.2 s per turn with gpt-4o-mini doing every classification and compression over the network.",
        "",
        "## Grader vs hand grades",
        "",
        f"{len(hand)} answers in `data/scenarios/hand_graded.jsonl` were read and graded by hand (recall and "
        f"conditioning judged as a careful reader would; {hand_pass} of them pass by hand). Grader disagreements on "
        f"pass/fail: **{grader_error}**; on the recall component alone: **{recall_error}**.",
        "",
    ]
    for h, g in recall_dis:
        if (h, g) not in disagreements:
            md.append(
                f"* recall only: `{h['scenario']}` / {h['model']} / {h['strategy']}: hand recall {h['hand_recall']}, "
                f"grader {g['recall']}; note: {h.get('note', '')}"
            )
    for h, g in disagreements:
        md.append(
            f"* `{h['scenario']}` / {h['model']} / {h['strategy']}: hand {'pass' if h['hand_pass'] else 'fail'}, "
            f"grader {'pass' if g['pass'] else 'fail'} ({g['why'] or 'no issue found'}); note: {h.get('note', '')}"
        )
    if not tag:
        md += ["", "## Larger runs (same grader, more scenarios; commands in each file)", ""]
        for ext in sorted(OUT_DIR.glob("e2e_results_*.json")):
            e = json.loads(ext.read_text(encoding="utf-8"))
            md.append(
                f"`{ext.name}` ({e.get('wall_s', 0):.0f} "
                f"s{', stopped by --time-limit' if e.get('stopped_by_time_limit') else ''}; report "
                f"`{ext.name.replace('e2e_results', 'e2e')[:-5]}.md`):"
            )
            md.append("")
            md.append("| model | strategy | n | pass | recall | constraint verbatim in context | LLM s (median) |")
            md.append("|---|---|---|---|---|---|---|")
            for m, per in e["summary"].items():
                for st, v in per.items():
                    md.append(
                        f"| {m} | {st} | {v['n']} | {v['pass']}/{v['n']} | {v['recall']}/{v['n']} | "
                        f"{v['verbatim']}/{v['n']} | {v['llm_s']:.1f} |"
                    )
            md.append("")
        md += [
            "## Reading the numbers",
            "",
            "* The context side works: AFM puts the constraint verbatim in the CRITICAL block in every run (column "
            "'constraint verbatim'), naive replay mostly does not at this budget, stateless never does.",
            "* The model side is the bottleneck. Qwen2.5-Coder-0.5B (a code model, 4-bit) and SmolLM2-135M rarely use "
            "a system constraint even when it is in front of them: they list sights as dishes, loop, or comply with "
            "the illegal tax request. So pass rates are near zero for every strategy and do not separate them the way "
            "the paper's gpt-4o-mini did; the few passes are AFM runs where the model restates the CRITICAL text"
            + (
                " (and the hand grades overturn some of them: "
                + ", ".join(f"`{h['scenario']}`/{h['model']}/{h['strategy']}" for h, g in disagreements if g["pass"])
                + ")"
                if any(g["pass"] for _, g in disagreements)
                else ""
            )
            + ". "
            "SmolLM2-135M is worse than Qwen 0.5B on every "
            "count; quality here scales with the model, not with the memory. Gemma 3 270M (installed) is a base model "
            "without a chat template and was not run.",
            "* Latency: build_context is well under a millisecond to a few ms per turn (warm caches); the answer "
            "itself takes tens of seconds on one shared CPU thread (these timings are inflated by other jobs on the 2 "
            "cores), against the paper's 21.2 s per turn, where gpt-4o-mini did every classification and compression "
            "over the network.",
            "",
            "## The grader",
            "",
            "`grade()` in `scripts/bench_e2e.py`, rules per scenario in `data/scenarios/*.json` (`grader`). Recall: a "
            "case-insensitive substring from `recall_any` (allergen names or 'allerg'; 'legal/law/illegal'; "
            "'warfarin'; ...). Condition: `forbid_unflagged` fails an answer that names a forbidden item (a dish "
            "containing the allergen, ibuprofen/aspirin with warfarin, sauna/wine in pregnancy, pork/beer for halal, "
            "US regions under GDPR, dates after the deadline) in a sentence without a caution word; `require_any` "
            "needs a refusal marker (tax), an accessibility word (wheelchair), an EU region (GDPR) or the date "
            "(deadline); `max_amount` fails any rouble amount above 300 000. Known weakness, seen in the hand grades: "
            "recall by keyword is fooled when the word appears for another reason ('made with peanuts' as praise, 'tax "
            "laws can be complex'); the condition rule then still fails those answers. Pass/fail agreement on a set "
            "where almost everything fails says little about false passes; treat the grader error rate as a lower "
            "bound.",
        ]
    md += [
        "",
        "## Per answer",
        "",
        "| model | scenario | strategy | pass | recall | grader notes |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["status"] == "ok":
            md.append(
                f"| {r['model']} | {r['scenario']} | {r['strategy']} | {r['pass']} | {r['recall']} | {r['why']} |"
            )
    md += ["", "## Sample answers (first 300 characters)", ""]
    for r in rows[:: max(1, len(rows) // 12)]:
        if r["status"] == "ok":
            md.append(
                f"* **{r['model']} / {r['scenario']} / {r['strategy']}** ({'pass' if r['pass'] else 'fail'}): "
                + r["answer"][:300].replace("\n", " ")
                + ("…" if len(r["answer"]) > 300 else "")
            )
    (OUT_DIR / f"e2e{tag}.md").write_text("\n".join(md), encoding="utf-8")
    if not tag:
        write_headline()
    print(json.dumps(summary, indent=1))
    print(f"grader error vs hand grades: {grader_error}; wall {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
