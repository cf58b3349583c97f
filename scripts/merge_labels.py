"""Merge the annotators' label files into the gold labels of the real-turn sample, with agreement.

    python -m scripts.merge_labels LABELS_DIR

Every item of ``data/real/items.jsonl`` was labelled by two independent annotators (``g<N>a`` and
``g<N>b`` for group N, following docs/labelling.md); where they disagreed, a third annotator
(``adj``), who saw neither label, labelled the item again and the majority decides (a three-way
split keeps the adjudicator's label). Writes ``data/real/labels.jsonl`` (one row per id: the gold
label and each annotator's label; no text) and ``data/real/agreement.json`` (per group: raw
agreement and Cohen's kappa of the two first annotators, and overall).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from afm_local.core.types import IMPORTANCE_NAMES
from scripts.common import ROOT, load_jsonl

REAL = ROOT / "data" / "real"


def read_labels(folder: Path) -> dict[str, dict[str, dict]]:
    """annotator code -> id -> row."""
    out: dict[str, dict[str, dict]] = {}
    for path in sorted(folder.glob("labels_group_*_batch_*_*.jsonl")):
        for row in load_jsonl(path):
            out.setdefault(row["annotator"], {})[row["id"]] = row
    return out


def kappa(a: list[str], b: list[str]) -> float:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in IMPORTANCE_NAMES) / n**2
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels_dir", type=Path)
    args = ap.parse_args()
    by_annotator = read_labels(args.labels_dir)
    adjudicator = by_annotator.get("adj", {})
    items = load_jsonl(REAL / "items.jsonl")
    rows, agreement, pairs = [], {}, {"a": [], "b": []}
    for group in sorted({it["group"] for it in items}):
        a, b = by_annotator[f"g{group}a"], by_annotator[f"g{group}b"]
        ids = [it["id"] for it in items if it["group"] == group]
        missing = [i for i in ids if i not in a or i not in b]
        if missing:
            raise SystemExit(f"group {group}: {len(missing)} items lack a label, e.g. {missing[0]}")
        la, lb = [a[i]["label"] for i in ids], [b[i]["label"] for i in ids]
        pairs["a"] += la
        pairs["b"] += lb
        agreement[f"group {group}"] = {"n": len(ids), "agreement": sum(x == y for x, y in zip(la, lb)) / len(ids),
                                       "kappa": kappa(la, lb)}
        for i, x, y in zip(ids, la, lb):
            votes = [x, y]
            if x != y:
                if i not in adjudicator:
                    raise SystemExit(f"{i}: the annotators disagree and no adjudication was found")
                votes.append(adjudicator[i]["label"])
            gold = Counter(votes).most_common(1)[0][0] if x == y or len(set(votes)) < 3 else votes[2]
            unsure = [r[i].get("unsure", False) for r in (a, b)]
            rows.append({"id": i, "label": gold, "a": x, "b": y, "adj": votes[2] if len(votes) == 3 else None,
                         "unsure": sum(unsure), "flags": sorted({r[i]["flag"] for r in (a, b) if r[i].get("flag")})})
    n = len(pairs["a"])
    agreement["all"] = {"n": n, "agreement": sum(x == y for x, y in zip(pairs["a"], pairs["b"])) / n,
                        "kappa": kappa(pairs["a"], pairs["b"]), "adjudicated": sum(r["adj"] is not None for r in rows),
                        "critical_agreement": _critical_agreement(pairs["a"], pairs["b"])}
    with (REAL / "labels.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    (REAL / "agreement.json").write_text(json.dumps(agreement, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(agreement["all"], indent=1))
    print("gold:", dict(Counter(r["label"] for r in rows)))


def _critical_agreement(a: list[str], b: list[str]) -> dict[str, float]:
    """How the two annotators agree on CRITICAL alone: positive agreement (2·both / (a + b))."""
    both = sum(x == y == "CRITICAL" for x, y in zip(a, b))
    na, nb = a.count("CRITICAL"), b.count("CRITICAL")
    return {"a": na, "b": nb, "both": both, "positive_agreement": 2 * both / (na + nb) if na + nb else 1.0}


if __name__ == "__main__":
    main()
