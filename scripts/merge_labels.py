"""Merge the annotators' label files into the gold labels of a real-turn sample, with agreement.

    python -m scripts.merge_labels LABELS_DIR                               # the first sample, data/real
    python -m scripts.merge_labels --sample real2 --adjudication DIR LABELS_DIR   # second sample: blind batches
    python -m scripts.merge_labels --sample real2 LABELS_DIR                # second sample: merge

Every item was labelled by two independent annotators following docs/labelling.md; where they disagreed, a third
annotator (``adj``), who saw neither label, labelled the item again and the majority decides (a three-way split keeps
the adjudicator's label).

* **First sample** (``data/real``): files ``labels_group_*_batch_*_*.jsonl`` in LABELS_DIR, each row naming its
  ``annotator`` (``g<N>a`` and ``g<N>b`` for group N, ``adj``). Writes ``data/real/labels.jsonl`` and
  ``data/real/agreement.json`` (per group: raw agreement and Cohen's kappa; overall, with CRITICAL agreement).
* **Second sample** (``data/real2``, scripts/sample_constraints.py; format in /work/annot/clf/README.md): files
  ``LABELS_DIR/<annotator>/batch_NN.jsonl``, rows ``{"id", "label", "unsure": 0|1, "flag"?, "note"?}``. Each batch
  (group NN of ``data/real2/items.jsonl``) must have exactly two annotators' files besides ``adj/``; the two are a and
  b in name order. ``--adjudication DIR`` writes, for every batch both have finished, ``DIR/batch_NN.jsonl`` with the
  items they disagree on (text and context as in the batches, no labels) for the adjudicator, and stops. Without it,
  the merge needs every batch finished and every disagreement in ``adj/batch_NN.jsonl``, and writes
  ``data/real2/labels.jsonl`` (``id``, ``label``, ``a``, ``b``, ``adj``, ``unsure``, ``flags``; no text) and
  ``data/real2/agreement.json``: agreement, Cohen's kappa and CRITICAL agreement (positive agreement
  2·both / (a + b), and kappa of CRITICAL against the rest) per group, per pool, per corpus family, per language,
  and overall, with the adjudication counts and the gold counts.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from afm_local.core.types import IMPORTANCE_NAMES
from scripts.common import ROOT, cohen_kappa, load_jsonl

REAL = ROOT / "data" / "real"
REAL2 = ROOT / "data" / "real2"
ADJUDICATOR = "adj"
FLAGS = {"offensive", "bad_mt", "wrong_role", "not_a_message"}


def read_labels(folder: Path) -> dict[str, dict[str, dict]]:
    """First sample: annotator code -> id -> row."""
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


def gold_label(a: str, b: str, adj: str | None) -> str:
    """The two first labels when they agree; otherwise the majority of the three, or the adjudicator's on a
    three-way split."""
    if a == b:
        return a
    if adj is None:
        raise ValueError("the annotators disagree and there is no adjudication")
    votes = Counter([a, b, adj])
    label, count = votes.most_common(1)[0]
    return label if count >= 2 else adj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labels_dir", type=Path)
    ap.add_argument("--sample", choices=("real", "real2"), default="real")
    ap.add_argument("--adjudication", type=Path, help="real2: write the adjudicator's batches here and stop")
    ap.add_argument("--data", type=Path, help="real2: where items.jsonl lies and the outputs go (default data/real2)")
    args = ap.parse_args()
    if args.sample == "real":
        merge_first(args.labels_dir)
    elif args.adjudication:
        n = write_adjudication(args.labels_dir, args.adjudication, args.data or REAL2)
        print(f"{n} disagreements -> {args.adjudication}")
    else:
        agreement = merge_second(args.labels_dir, args.data or REAL2)
        print(json.dumps(agreement["all"], indent=1))
        print("gold:", agreement["gold"])


def merge_first(labels_dir: Path) -> None:
    by_annotator = read_labels(labels_dir)
    adjudicator = by_annotator.get(ADJUDICATOR, {})
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
            if x != y and i not in adjudicator:
                raise SystemExit(f"{i}: the annotators disagree and no adjudication was found")
            adj = adjudicator[i]["label"] if x != y else None
            unsure = [r[i].get("unsure", False) for r in (a, b)]
            rows.append({"id": i, "label": gold_label(x, y, adj), "a": x, "b": y, "adj": adj,
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


# ---------------------------------------------------------------------------------------------------------------
# The second sample: labels/<annotator>/batch_NN.jsonl


def batch_name(group: int) -> str:
    return f"batch_{group:02d}.jsonl"


def read_file(path: Path, expected: list[str] | None) -> dict[str, dict]:
    """One annotator's file for one batch, checked: known labels, unsure 0/1, known flags, each expected id once and
    no other."""
    out: dict[str, dict] = {}
    for n, row in enumerate(load_jsonl(path), start=1):
        where = f"{path}:{n}"
        if row.get("label") not in IMPORTANCE_NAMES:
            raise SystemExit(f"{where}: label must be one of {IMPORTANCE_NAMES}, got {row.get('label')!r}")
        if row.get("unsure", 0) not in (0, 1, False, True):
            raise SystemExit(f"{where}: unsure must be 0 or 1")
        if row.get("flag") and row["flag"] not in FLAGS:
            raise SystemExit(f"{where}: unknown flag {row['flag']!r} (one of {sorted(FLAGS)})")
        if row.get("id") in out:
            raise SystemExit(f"{where}: {row.get('id')} labelled twice")
        out[row["id"]] = row
    if expected is not None:
        missing, extra = set(expected) - set(out), set(out) - set(expected)
        if missing or extra:
            raise SystemExit(f"{path}: {len(missing)} items without a label, {len(extra)} ids not in the batch"
                             f" (e.g. {sorted(missing or extra)[0]})")
    return out


def batch_pairs(labels_dir: Path, items: list[dict]) -> dict[int, tuple[tuple[str, dict], tuple[str, dict]] | None]:
    """group -> ((name a, labels a), (name b, labels b)), or None while fewer than two annotators have finished."""
    ids: dict[int, list[str]] = defaultdict(list)
    for it in items:
        ids[it["group"]].append(it["id"])
    annotators = sorted(p.name for p in labels_dir.iterdir() if p.is_dir() and p.name != ADJUDICATOR)
    out: dict[int, tuple | None] = {}
    for group, expected in sorted(ids.items()):
        done = [name for name in annotators if (labels_dir / name / batch_name(group)).is_file()]
        if len(done) > 2:
            raise SystemExit(f"{batch_name(group)}: more than two first annotators ({', '.join(done)})")
        out[group] = (tuple((name, read_file(labels_dir / name / batch_name(group), expected)) for name in done)
                      if len(done) == 2 else None)
    return out


def write_adjudication(labels_dir: Path, folder: Path, data: Path) -> int:
    """The items a and b disagree on, per finished batch, with text and context but no labels."""
    from scripts.corpora import turn
    from scripts.labelling import write_batches

    if ROOT in folder.resolve().parents or folder.resolve() == ROOT:
        raise SystemExit("the adjudication folder must lie outside the repository: it holds third-party text")
    items = load_jsonl(data / "items.jsonl")
    total = 0
    for group, pair in batch_pairs(labels_dir, items).items():
        if pair is None:
            print(f"{batch_name(group)}: waiting for two annotators")
            continue
        (_, a), (_, b) = pair
        ids = [it["id"] for it in items if it["group"] == group and a[it["id"]]["label"] != b[it["id"]]["label"]]
        total += len(ids)
        if ids:
            write_batches(folder, [turn(i) for i in ids], size=len(ids), name=batch_name(group))
        print(f"{batch_name(group)}: {len(ids)} disagreements")
    return total


def _family(corpus: str) -> str:
    return "multiwoz" if corpus.startswith("multiwoz22") else corpus


def agreement_figures(la: list[str], lb: list[str]) -> dict:
    n = len(la)
    ca, cb = [x == "CRITICAL" for x in la], [y == "CRITICAL" for y in lb]
    return {"n": n, "agreement": sum(x == y for x, y in zip(la, lb)) / n, "kappa": kappa(la, lb),
            "critical": {**_critical_agreement(la, lb), "kappa": cohen_kappa(ca, cb)}}


def merge_second(labels_dir: Path, data: Path) -> dict:
    items = load_jsonl(data / "items.jsonl")
    pairs = batch_pairs(labels_dir, items)
    waiting = [batch_name(g) for g, p in pairs.items() if p is None]
    if waiting:
        raise SystemExit(f"{len(waiting)} batches lack two annotators' labels: {', '.join(waiting)}")
    rows, agreement, slices = [], {"groups": {}}, defaultdict(lambda: ([], []))
    for group, ((name_a, a), (name_b, b)) in pairs.items():
        ids = [it for it in items if it["group"] == group]
        disagree = [it["id"] for it in ids if a[it["id"]]["label"] != b[it["id"]]["label"]]
        adj_path = labels_dir / ADJUDICATOR / batch_name(group)
        if disagree and not adj_path.is_file():
            raise SystemExit(f"{batch_name(group)}: {len(disagree)} disagreements and no {adj_path}")
        adj = read_file(adj_path, disagree) if disagree else {}
        la, lb = [a[it["id"]]["label"] for it in ids], [b[it["id"]]["label"] for it in ids]
        agreement["groups"][str(group)] = {"annotators": [name_a, name_b], **agreement_figures(la, lb),
                                           "adjudicated": len(disagree)}
        for it, x, y in zip(ids, la, lb):
            fam = _family(it["corpus"])
            for key in ("all", f"pool {it['pool']}", f"corpus {fam}", f"lang {it['lang']}", f"role {it['role']}"):
                slices[key][0].append(x)
                slices[key][1].append(y)
            i = it["id"]
            third = adj[i]["label"] if i in adj else None
            raters = [r[i] for r in (a, b, adj) if i in r]
            rows.append({"id": i, "label": gold_label(x, y, third), "a": x, "b": y, "adj": third,
                         "unsure": sum(int(bool(r.get("unsure", 0))) for r in raters[:2]),
                         "flags": sorted({r["flag"] for r in raters if r.get("flag")})})
    for key, (la, lb) in sorted(slices.items()):
        agreement[key] = agreement_figures(la, lb)
    agreement["all"]["adjudicated"] = sum(r["adj"] is not None for r in rows)
    agreement["all"]["adjudicated_to"] = dict(Counter(r["label"] for r in rows if r["adj"] is not None))
    agreement["all"]["three_way_splits"] = sum(len({r["a"], r["b"], r["adj"]}) == 3 for r in rows if r["adj"])
    by_id = {it["id"]: it for it in items}
    agreement["gold"] = dict(Counter(r["label"] for r in rows))
    agreement["gold_critical_by_split"] = {
        split: dict(Counter(_family(by_id[r["id"]]["corpus"]) for r in rows
                            if r["label"] == "CRITICAL" and by_id[r["id"]]["split"] == split))
        for split in ("train", "dev", "test")}
    with (data / "labels.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    (data / "agreement.json").write_text(json.dumps(agreement, indent=1) + "\n", encoding="utf-8")
    return agreement


if __name__ == "__main__":
    main()
