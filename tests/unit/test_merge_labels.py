"""Merging two annotators' labels and an adjudicator's into gold labels, second-sample layout (no corpus needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import corpora, labelling, merge_labels
from scripts.corpora import Turn


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _items(data: Path) -> list[dict]:
    items = [
        {
            "id": f"casino|d{k}|0",
            "corpus": "casino",
            "role": "user",
            "lang": "en",
            "split": "test",
            "pool": "pref",
            "group": 1,
        }
        for k in range(4)
    ]
    items += [
        {
            "id": f"multiwoz22_ru_mt|m{k}|1",
            "corpus": "multiwoz22_ru_mt",
            "role": "assistant",
            "lang": "ru",
            "split": "train",
            "pool": "random",
            "group": 2,
        }
        for k in range(3)
    ]
    _write(data / "items.jsonl", items)
    return items


def _labels(folder: Path, name: str, group: int, labels: dict[str, str], **extra) -> None:
    _write(
        folder / name / f"batch_{group:02d}.jsonl",
        [{"id": i, "label": lab, "unsure": 0, **extra.get(i, {})} for i, lab in labels.items()],
    )


def test_gold_label():
    assert merge_labels.gold_label("CRITICAL", "CRITICAL", None) == "CRITICAL"
    assert merge_labels.gold_label("CRITICAL", "RELEVANT", "RELEVANT") == "RELEVANT"
    assert merge_labels.gold_label("CRITICAL", "RELEVANT", "TRIVIAL") == "TRIVIAL"  # three-way split: adjudicator
    with pytest.raises(ValueError):
        merge_labels.gold_label("CRITICAL", "RELEVANT", None)


def _two_batches(labels: Path) -> None:
    c = [f"casino|d{k}|0" for k in range(4)]
    m = [f"multiwoz22_ru_mt|m{k}|1" for k in range(3)]
    _labels(
        labels,
        "ann1",
        1,
        {c[0]: "CRITICAL", c[1]: "CRITICAL", c[2]: "RELEVANT", c[3]: "TRIVIAL"},
        **{c[1]: {"unsure": 1, "flag": "offensive"}},
    )
    _labels(labels, "ann2", 1, {c[0]: "CRITICAL", c[1]: "RELEVANT", c[2]: "RELEVANT", c[3]: "TRIVIAL"})
    _labels(labels, "ann3", 2, {m[0]: "RELEVANT", m[1]: "RELEVANT", m[2]: "TRIVIAL"})
    _labels(labels, "ann1", 2, {m[0]: "RELEVANT", m[1]: "RELEVANT", m[2]: "TRIVIAL"})


def test_merge_second(tmp_path):
    data, labels = tmp_path / "data", tmp_path / "labels"
    _items(data)
    _two_batches(labels)
    with pytest.raises(SystemExit, match="1 disagreements and no"):
        merge_labels.merge_second(labels, merge_labels.second_sample(data))
    _labels(labels, "adj", 1, {"casino|d1|0": "CRITICAL"})
    agreement = merge_labels.merge_second(labels, merge_labels.second_sample(data))
    rows = {r["id"]: r for r in map(json.loads, (data / "labels.jsonl").read_text().splitlines())}
    assert rows["casino|d1|0"] == {
        "id": "casino|d1|0",
        "label": "CRITICAL",
        "a": "CRITICAL",
        "b": "RELEVANT",
        "adj": "CRITICAL",
        "unsure": 1,
        "flags": ["offensive"],
    }
    assert rows["casino|d0|0"]["adj"] is None and rows["casino|d0|0"]["label"] == "CRITICAL"
    assert agreement["groups"]["1"]["annotators"] == ["ann1", "ann2"]
    assert agreement["groups"]["2"]["annotators"] == ["ann1", "ann3"]
    assert agreement["groups"]["1"]["agreement"] == pytest.approx(0.75)
    assert agreement["groups"]["1"]["critical"]["positive_agreement"] == pytest.approx(2 / 3)
    assert agreement["groups"]["2"]["kappa"] == 1.0
    assert agreement["all"]["n"] == 7 and agreement["all"]["adjudicated"] == 1
    assert agreement["lang ru"]["n"] == 3 and agreement["corpus multiwoz"]["n"] == 3
    assert agreement["gold"] == {"CRITICAL": 2, "RELEVANT": 3, "TRIVIAL": 2}
    assert agreement["gold_critical_by_split"]["test"] == {"casino": 2}
    assert json.loads((data / "agreement.json").read_text())["all"]["kappa"] == agreement["all"]["kappa"]


def test_merge_second_checks_files(tmp_path):
    data, labels = tmp_path / "data", tmp_path / "labels"
    _items(data)
    _two_batches(labels)
    _labels(labels, "ann2", 2, {"multiwoz22_ru_mt|m0|1": "RELEVANT"})
    with pytest.raises(SystemExit, match="more than two"):
        merge_labels.merge_second(labels, merge_labels.second_sample(data))
    (labels / "ann2" / "batch_02.jsonl").unlink()
    _labels(labels, "ann2", 1, {"casino|d0|0": "critical"})
    with pytest.raises(SystemExit, match="label must be one of"):
        merge_labels.merge_second(labels, merge_labels.second_sample(data))
    _labels(labels, "ann2", 1, {"casino|d0|0": "CRITICAL"})
    with pytest.raises(SystemExit, match="3 items without a label"):
        merge_labels.merge_second(labels, merge_labels.second_sample(data))
    _two_batches(labels)
    (labels / "ann3" / "batch_02.jsonl").unlink()
    with pytest.raises(SystemExit, match="batch_02.jsonl"):
        merge_labels.merge_second(labels, merge_labels.second_sample(data))


def test_adjudication_batches_hold_only_the_disagreements(tmp_path, monkeypatch):
    data, labels, out = tmp_path / "data", tmp_path / "labels", tmp_path / "adjudication"
    _items(data)
    _two_batches(labels)
    monkeypatch.setattr(corpora, "turn", lambda i: Turn(*i.split("|")[:2], int(i.split("|")[2]), "user", "text", "en"))
    monkeypatch.setattr(labelling, "previous", lambda t: None)
    assert merge_labels.write_adjudication(labels, out, merge_labels.second_sample(data)) == 1
    rows = [json.loads(line) for line in (out / "batch_01.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["casino|d1|0"] and "label" not in rows[0]
    assert not (out / "batch_02.jsonl").exists()


def test_relabelling_keeps_pending_disagreements_out(tmp_path):
    """The first sample relabelled: ids from the rb batches, v1 beside v2, a disagreement not yet adjudicated is
    written with label null (and adjudicated later by the same files)."""
    real, batches, labels = tmp_path / "real", tmp_path / "relabel", tmp_path / "labels"
    items = _items(real)
    _write(real / "labels.jsonl", [{"id": it["id"], "label": "RELEVANT"} for it in items])
    chosen = [it["id"] for it in items[:3]]
    _write(batches / "rb_01.jsonl", [{"id": i, "text": "not read"} for i in chosen])
    for name, third in (("rl1", "CRITICAL"), ("rl2", "RELEVANT")):
        _write(
            labels / name / "rb_01.jsonl",
            [{"id": i, "label": lab, "unsure": 0} for i, lab in zip(chosen, ["CRITICAL", "TRIVIAL", third])],
        )
    sample = merge_labels.relabelled_sample(batches, real)
    agreement = merge_labels.merge_second(labels, sample)
    rows = {r["id"]: r for r in map(json.loads, (real / "labels_v2.jsonl").read_text().splitlines())}
    assert list(rows) == chosen
    assert rows[chosen[0]]["label"] == "CRITICAL" and rows[chosen[0]]["v1"] == "RELEVANT"
    assert rows[chosen[2]]["label"] is None and rows[chosen[2]]["adj"] is None
    assert agreement["all"]["pending"] == 1 and agreement["gold"]["pending"] == 1
    assert agreement["from_v1"] == {"RELEVANT -> CRITICAL": 1, "RELEVANT -> TRIVIAL": 1, "RELEVANT -> pending": 1}
    assert (real / "agreement_v2.json").is_file() and not (real / "agreement.json").exists()
    _write(labels / "adj" / "rb_01.jsonl", [{"id": chosen[2], "label": "RELEVANT", "unsure": 0}])
    merge_labels.merge_second(labels, sample)
    rows = {r["id"]: r for r in map(json.loads, (real / "labels_v2.jsonl").read_text().splitlines())}
    assert rows[chosen[2]]["label"] == "RELEVANT" and rows[chosen[2]]["adj"] == "RELEVANT"
    _write(batches / "rb_02.jsonl", [{"id": items[3]["id"]}])  # a batch nobody has labelled yet: pending
    agreement = merge_labels.merge_second(labels, merge_labels.relabelled_sample(batches, real))
    assert agreement["groups"]["2"] == {"annotators": [], "n": 1, "waiting": True}
    rows = {r["id"]: r for r in map(json.loads, (real / "labels_v2.jsonl").read_text().splitlines())}
    assert rows[items[3]["id"]] == {
        "id": items[3]["id"],
        "label": None,
        "a": None,
        "b": None,
        "adj": None,
        "unsure": 0,
        "flags": [],
        "v1": "RELEVANT",
    }
    assert agreement["all"]["n"] == 3 and agreement["gold"]["pending"] == 1
    _write(batches / "rb_03.jsonl", [{"id": "casino|unknown|0"}])
    with pytest.raises(SystemExit, match="is not a turn of"):
        merge_labels.relabelled_sample(batches, real)
