"""Merge the annotators' label files into the gold labels of a real-turn sample, with agreement.

    python -m scripts.merge_labels LABELS_DIR                               # the first sample, data/real
    python -m scripts.merge_labels --sample real2 --adjudication DIR LABELS_DIR   # second sample: blind batches
    python -m scripts.merge_labels --sample real2 LABELS_DIR                # second sample: merge
    python -m scripts.merge_labels --sample relabel --batches DIR [--adjudication DIR] LABELS_DIR  # first, relabelled

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
* **The first sample relabelled under version 2** (issue 30): its turns in ``DIR/rb_NN.jsonl`` (``--batches``; the
  ids are read, nothing else), labelled into ``LABELS_DIR/<annotator>/rb_NN.jsonl`` the same way. Writes
  ``data/real/labels_v2.jsonl`` (the rows above plus ``v1``, the version 1 gold label) and ``agreement_v2.json``
  (with ``from_v1``, how the labels moved). A disagreement whose ``adj/rb_NN.jsonl`` is not there yet gets
  ``label`` null: training and evaluation leave it out until it is adjudicated; so does every turn of a batch that
  lacks its two annotators (``rb_05``, scripts/sample_relabel.py).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from afm_local.core.vocabulary import IMPORTANCE_NAMES
from scripts.common import ROOT, cohen_kappa, load_jsonl

REAL = ROOT / "data" / "real"
REAL2 = ROOT / "data" / "real2"
ADJUDICATOR = "adj"
RELABEL = "rb"  # the relabelling batches of the first sample: rb_NN.jsonl
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
    ap.add_argument("--sample", choices=("real", "real2", "relabel"), default="real")
    ap.add_argument("--adjudication", type=Path, help="real2, relabel: write the adjudicator's batches here and stop")
    ap.add_argument("--data", type=Path, help="real2: where items.jsonl lies and the outputs go (default data/real2)")
    ap.add_argument("--batches", type=Path, help="relabel: the folder of the rb_NN.jsonl batches (ids read only)")
    args = ap.parse_args()
    if args.sample == "real":
        merge_first(args.labels_dir)
        return
    if args.sample == "relabel" and not args.batches:
        ap.error("--sample relabel needs --batches, the folder of the rb_NN.jsonl batch files")
    sample = relabelled_sample(args.batches) if args.sample == "relabel" else second_sample(args.data or REAL2)
    if args.adjudication:
        n = write_adjudication(args.labels_dir, args.adjudication, sample)
        print(f"{n} disagreements -> {args.adjudication}")
    else:
        agreement = merge_second(args.labels_dir, sample)
        print(json.dumps(agreement["all"], indent=1))
        print("gold:", agreement["gold"])
        if "from_v1" in agreement:
            print("from version 1:", agreement["from_v1"])


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
        agreement[f"group {group}"] = {
            "n": len(ids),
            "agreement": sum(x == y for x, y in zip(la, lb)) / len(ids),
            "kappa": kappa(la, lb),
        }
        for i, x, y in zip(ids, la, lb):
            if x != y and i not in adjudicator:
                raise SystemExit(f"{i}: the annotators disagree and no adjudication was found")
            adj = adjudicator[i]["label"] if x != y else None
            unsure = [r[i].get("unsure", False) for r in (a, b)]
            rows.append(
                {
                    "id": i,
                    "label": gold_label(x, y, adj),
                    "a": x,
                    "b": y,
                    "adj": adj,
                    "unsure": sum(unsure),
                    "flags": sorted({r[i]["flag"] for r in (a, b) if r[i].get("flag")}),
                }
            )
    n = len(pairs["a"])
    agreement["all"] = {
        "n": n,
        "agreement": sum(x == y for x, y in zip(pairs["a"], pairs["b"])) / n,
        "kappa": kappa(pairs["a"], pairs["b"]),
        "adjudicated": sum(r["adj"] is not None for r in rows),
        "critical_agreement": _critical_agreement(pairs["a"], pairs["b"]),
    }
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
# The second sample (labels/<annotator>/batch_NN.jsonl) and the first sample relabelled (labels/<rl>/rb_NN.jsonl)


@dataclass(frozen=True)
class Sample:
    """A doubly labelled sample in the per-annotator layout: its items (each with its batch as ``group``), the stem
    of its batch files, and where its gold labels and agreement go. ``pending_ok``: a disagreement not yet
    adjudicated is written with ``label`` null (left out of training and evaluation) instead of refused."""

    items: list[dict]
    stem: str
    out: Path
    labels_name: str = "labels.jsonl"
    agreement_name: str = "agreement.json"
    pending_ok: bool = False
    earlier: dict[str, str] = field(default_factory=dict)  # id -> the label under version 1 (the relabelling)

    def batch_name(self, group: int) -> str:
        return f"{self.stem}_{group:02d}.jsonl"


def second_sample(data: Path = REAL2) -> Sample:
    """data/real2: items.jsonl names every turn and its batch."""
    return Sample(load_jsonl(data / "items.jsonl"), "batch", data)


def relabelled_sample(batches: Path, real: Path = REAL) -> Sample:
    """The first sample's turns relabelled under version 2 of the guidelines: the ids of ``batches/rb_NN.jsonl``
    (read for their ids only), their metadata from ``real/items.jsonl``, the batch number as group."""
    items = {it["id"]: it for it in load_jsonl(real / "items.jsonl")}
    chosen = []
    for path in sorted(batches.glob(f"{RELABEL}_*.jsonl")):
        group = int(path.stem.split("_")[1])
        for row in load_jsonl(path):
            if row["id"] not in items:
                raise SystemExit(f"{path}: {row['id']} is not a turn of {real / 'items.jsonl'}")
            chosen.append({**items[row["id"]], "group": group})
    if not chosen:
        raise SystemExit(f"no {RELABEL}_NN.jsonl batch files in {batches}")
    earlier = {r["id"]: r["label"] for r in load_jsonl(real / "labels.jsonl")}
    return Sample(chosen, RELABEL, real, "labels_v2.jsonl", "agreement_v2.json", pending_ok=True, earlier=earlier)


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
            raise SystemExit(
                f"{path}: {len(missing)} items without a label, {len(extra)} ids not in the batch"
                f" (e.g. {sorted(missing or extra)[0]})"
            )
    return out


def batch_pairs(labels_dir: Path, sample: Sample) -> dict[int, tuple[tuple[str, dict], tuple[str, dict]] | None]:
    """group -> ((name a, labels a), (name b, labels b)), or None while fewer than two annotators have finished."""
    ids: dict[int, list[str]] = defaultdict(list)
    for it in sample.items:
        ids[it["group"]].append(it["id"])
    annotators = sorted(p.name for p in labels_dir.iterdir() if p.is_dir() and p.name != ADJUDICATOR)
    out: dict[int, tuple | None] = {}
    for group, expected in sorted(ids.items()):
        name = sample.batch_name(group)
        done = [who for who in annotators if (labels_dir / who / name).is_file()]
        if len(done) > 2:
            raise SystemExit(f"{name}: more than two first annotators ({', '.join(done)})")
        out[group] = (
            tuple((who, read_file(labels_dir / who / name, expected)) for who in done) if len(done) == 2 else None
        )
    return out


def write_adjudication(labels_dir: Path, folder: Path, sample: Sample) -> int:
    """The items a and b disagree on, per finished batch, with text and context but no labels."""
    from scripts.corpora import turn
    from scripts.labelling import write_batches

    if ROOT in folder.resolve().parents or folder.resolve() == ROOT:
        raise SystemExit("the adjudication folder must lie outside the repository: it holds third-party text")
    total = 0
    for group, pair in batch_pairs(labels_dir, sample).items():
        name = sample.batch_name(group)
        if pair is None:
            print(f"{name}: waiting for two annotators")
            continue
        (_, a), (_, b) = pair
        ids = [it["id"] for it in sample.items if it["group"] == group and a[it["id"]]["label"] != b[it["id"]]["label"]]
        total += len(ids)
        if ids:
            write_batches(folder, [turn(i) for i in ids], size=len(ids), name=name)
        print(f"{name}: {len(ids)} disagreements")
    return total


def _family(corpus: str) -> str:
    return "multiwoz" if corpus.startswith("multiwoz22") else corpus


def agreement_figures(la: list[str], lb: list[str]) -> dict:
    n = len(la)
    ca, cb = [x == "CRITICAL" for x in la], [y == "CRITICAL" for y in lb]
    return {
        "n": n,
        "agreement": sum(x == y for x, y in zip(la, lb)) / n,
        "kappa": kappa(la, lb),
        "critical": {**_critical_agreement(la, lb), "kappa": cohen_kappa(ca, cb)},
    }


def adjudications(labels_dir: Path, sample: Sample, group: int, disagree: list[str]) -> dict[str, dict]:
    """The adjudicator's labels for one batch's disagreements; ``{}`` while pending where the sample allows it."""
    path = labels_dir / ADJUDICATOR / sample.batch_name(group)
    if not disagree:
        return {}
    if not path.is_file():
        if sample.pending_ok:
            return {}
        raise SystemExit(f"{sample.batch_name(group)}: {len(disagree)} disagreements and no {path}")
    return read_file(path, disagree)


def merge_second(labels_dir: Path, sample: Sample) -> dict:
    """Gold labels and agreement of a sample in the per-annotator layout (written to ``sample.out``)."""
    pairs = batch_pairs(labels_dir, sample)
    waiting = [sample.batch_name(g) for g, p in pairs.items() if p is None]
    if waiting and not sample.pending_ok:
        raise SystemExit(f"{len(waiting)} batches lack two annotators' labels: {', '.join(waiting)}")
    rows, agreement, slices = [], {"groups": {}}, defaultdict(lambda: ([], []))
    for group, pair in pairs.items():
        ids = [it for it in sample.items if it["group"] == group]
        if pair is None:  # not labelled yet: every turn pending
            agreement["groups"][str(group)] = {"annotators": [], "n": len(ids), "waiting": True}
            rows += [gold_row(it["id"], {}, {}, {}, sample) for it in ids]
            continue
        (name_a, a), (name_b, b) = pair
        disagree = [it["id"] for it in ids if a[it["id"]]["label"] != b[it["id"]]["label"]]
        adj = adjudications(labels_dir, sample, group, disagree)
        la, lb = [a[it["id"]]["label"] for it in ids], [b[it["id"]]["label"] for it in ids]
        agreement["groups"][str(group)] = {
            "annotators": [name_a, name_b],
            **agreement_figures(la, lb),
            "disagreements": len(disagree),
            "adjudicated": len(adj),
        }
        for it, x, y in zip(ids, la, lb):
            for key in (
                "all",
                f"pool {it['pool']}",
                f"corpus {_family(it['corpus'])}",
                f"lang {it['lang']}",
                f"role {it['role']}",
            ):
                slices[key][0].append(x)
                slices[key][1].append(y)
            rows.append(gold_row(it["id"], a, b, adj, sample))
    for key, (la, lb) in sorted(slices.items()):
        agreement[key] = agreement_figures(la, lb)
    agreement["all"] |= adjudication_counts(rows)
    agreement |= gold_counts(rows, sample)
    with (sample.out / sample.labels_name).open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    (sample.out / sample.agreement_name).write_text(json.dumps(agreement, indent=1) + "\n", encoding="utf-8")
    return agreement


def gold_row(i: str, a: dict, b: dict, adj: dict, sample: Sample) -> dict:
    """One turn's gold row: its label (null while a disagreement awaits adjudication or the batch its annotators),
    a, b, adj, unsure, flags."""
    x, y = (a[i]["label"], b[i]["label"]) if i in a and i in b else (None, None)
    third = adj[i]["label"] if i in adj else None
    raters = [r[i] for r in (a, b, adj) if i in r]
    label = gold_label(x, y, third) if x and y and (x == y or third) else None
    row = {
        "id": i,
        "label": label,
        "a": x,
        "b": y,
        "adj": third,
        "unsure": sum(int(bool(r.get("unsure", 0))) for r in raters[:2]),
        "flags": sorted({r["flag"] for r in raters if r.get("flag")}),
    }
    return row | ({"v1": sample.earlier[i]} if sample.earlier else {})


def adjudication_counts(rows: list[dict]) -> dict:
    return {
        "adjudicated": sum(r["adj"] is not None for r in rows),
        "pending": sum(r["label"] is None for r in rows),
        "adjudicated_to": dict(Counter(r["label"] for r in rows if r["adj"] is not None)),
        "three_way_splits": sum(len({r["a"], r["b"], r["adj"]}) == 3 for r in rows if r["adj"]),
    }


def gold_counts(rows: list[dict], sample: Sample) -> dict:
    """Gold counts, gold CRITICAL per split and family (the 40% check) and, for a relabelling, how the labels moved
    from version 1."""
    by_id = {it["id"]: it for it in sample.items}
    out = {
        "gold": dict(Counter(r["label"] or "pending" for r in rows)),
        "gold_critical_by_split": {
            split: dict(
                Counter(
                    _family(by_id[r["id"]]["corpus"])
                    for r in rows
                    if r["label"] == "CRITICAL" and by_id[r["id"]]["split"] == split
                )
            )
            for split in ("train", "dev", "test")
        },
    }
    if sample.earlier:
        out["from_v1"] = dict(sorted(Counter(f"{r['v1']} -> {r['label'] or 'pending'}" for r in rows).items()))
    return out


if __name__ == "__main__":
    main()
