"""The judges' tool, the import of their verdicts and the agreement figures (no model, no corpus)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import judge_compression
from scripts.common import cohen_kappa, judged_figures

TOOLS = Path(__file__).resolve().parents[2] / "scripts" / "judging"


def test_cohen_kappa():
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(0.5)
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    assert cohen_kappa([True] * 5, [True] * 5) == 1.0


def test_judged_figures_table():
    rows = [
        {"judges": {"A": "fgk", "B": "fg-"}},
        {"judges": {"A": "f-k", "B": "f-k"}},
        {"judges": {"A": "fgk"}},
    ]  # one judge only: not counted
    text = "\n".join(judged_figures(rows))
    assert "n = 2" in text
    assert "| faithful | 100% | 100% | 100% | 1.00 | 100% |" in text
    assert "| keeps what a later question needs | 100% | 50% | 50% |" in text
    assert "| faithful and grammatical | 50% | 50% | 100% | 1.00 | 50% |" in text


def _tool(folder: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, str(folder / "tool.py"), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_tool_records_and_import_keeps_no_text(tmp_path, monkeypatch):
    shutil.copy(TOOLS / "tool.py", tmp_path / "tool.py")
    items = [
        {
            "item": n,
            "id": f"c|d{n}|0",
            "lang": "en",
            "method": "extractive-sentences",
            "source": f"Source {n}.",
            "form": f"Form {n}.",
            "sha": f"sha{n}",
        }
        for n in (1, 2, 3)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    assert "Source 2." in _tool(tmp_path, "show", "2", "2") and "Source 1." not in _tool(tmp_path, "show", "2", "2")
    _tool(tmp_path, "put", "A", "1:fgk 2:f-k")
    _tool(tmp_path, "put", "A", "2:fg- 3:---")  # a later verdict replaces an earlier one
    _tool(tmp_path, "put", "B", "1:fgk 2:fgk 3:f--")
    assert "A: 3 of 3 judged" in _tool(tmp_path, "status", "A")
    bad = subprocess.run(
        [sys.executable, str(tmp_path / "tool.py"), "put", "A", "1:gfk"], capture_output=True, text=True
    )
    assert bad.returncode != 0
    out = tmp_path / "real_judgements.jsonl"
    monkeypatch.setattr(judge_compression, "JUDGEMENTS", out)
    monkeypatch.setattr(judge_compression, "ROOT", tmp_path)
    judge_compression.import_judgements(tmp_path, ["A", "B"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["judges"] for r in rows] == [{"A": "fgk", "B": "fgk"}, {"A": "fg-", "B": "fgk"}, {"A": "---", "B": "f--"}]
    assert "Source" not in out.read_text() and "Form" not in out.read_text()
