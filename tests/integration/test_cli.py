"""The ``afm-local`` command: output formats and one-line errors with exit code 2."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.real import EXAMPLES, ROOT, afm

PEANUT = EXAMPLES / "peanut_trip.json"


def test_pack_json_reports_every_message():
    out = afm("pack", str(PEANUT), "--budget", "300", "--render", "structured", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    history = json.loads(PEANUT.read_text())["messages"]
    assert set(data) == {"messages", "items", "tokens_used", "budget_tokens"}
    assert [it["index"] for it in data["items"]] == list(range(len(history)))
    assert data["items"][1]["importance"] == "CRITICAL" and data["items"][1]["fidelity"] == "full"
    assert {it["importance"] for it in data["items"]} <= {"CRITICAL", "RELEVANT", "TRIVIAL"}
    assert data["tokens_used"] <= data["budget_tokens"] == 300
    assert history[1]["content"] in data["messages"][0]["content"]


def test_pack_text_from_stdin_with_a_plain_list(tmp_path):
    history = [
        {"role": "user", "content": "[!] Never book flights before 9am."},
        {"role": "assistant", "content": "Noted."},
    ]
    out = afm("pack", "-", "--query", "Book me a flight to Rome", "--budget", "200", stdin=json.dumps(history))
    assert out.returncode == 0, out.stderr
    assert "CRITICAL" in out.stdout and "Never book flights before 9am." in out.stdout


@pytest.mark.parametrize(
    ("payload", "args", "message"),
    [
        ("{not json", ["--budget", "100", "--query", "q"], "malformed JSON"),
        ('[{"role": "wizard", "content": "x"}]', ["--budget", "100", "--query", "q"], "unknown role"),
        ('[{"role": "user"}]', ["--budget", "100", "--query", "q"], "must be an object"),
        ('[{"role": "user", "content": "hi"}]', ["--budget", "0", "--query", "q"], "positive integer"),
        (
            '[{"role": "user", "content": "[!] I am allergic to peanuts and shellfish."}]',
            ["--budget", "12", "--query", "q"],
            "minimum budget is",
        ),
    ],
)
def test_errors_are_one_line_with_exit_code_2(payload, args, message):
    out = afm("pack", "-", *args, stdin=payload)
    assert out.returncode == 2
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_invalid_utf8_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"role": "user", "content": "\xff\xfe"}]')
    out = afm("pack", str(bad), "--budget", "100", "--query", "q")
    assert out.returncode == 2 and "not valid UTF-8" in out.stderr


def test_missing_models_name_the_install_command(tmp_path):
    (tmp_path / "manifest.json").write_text((ROOT / "models" / "manifest.json").read_text())
    out = afm("pack", str(PEANUT), "--budget", "300", env={"AFM_MODELS_DIR": str(tmp_path)})
    assert out.returncode == 2
    assert "afm-local models install" in out.stderr


def test_models_verify_detects_corruption(tmp_path):
    (tmp_path / "manifest.json").write_text((ROOT / "models" / "manifest.json").read_text())
    shutil.copytree(ROOT / "models" / "tiktoken", tmp_path / "tiktoken")
    manifest = json.loads((ROOT / "models" / "manifest.json").read_text())
    victim = tmp_path / manifest["models"]["tiktoken"]["files"][0]["path"]  # a vocabulary the manifest pins
    victim.write_bytes(victim.read_bytes()[:-10])
    out = afm("models", "verify", "tiktoken", env={"AFM_MODELS_DIR": str(tmp_path)})
    assert out.returncode == 2 and "afm-local models install tiktoken" in out.stderr
    assert "corrupt" in out.stdout


def test_models_install_from_a_local_path_is_verified_and_idempotent(tmp_path):
    (tmp_path / "manifest.json").write_text((ROOT / "models" / "manifest.json").read_text())
    src = ROOT / "models" / "embedder" / "tokenizer.json"
    env = {"AFM_MODELS_DIR": str(tmp_path)}
    first = afm("models", "install", "minilm-l6-v2", "--from", f"minilm-l6-v2={src}", env=env)
    assert first.returncode == 0, first.stderr
    again = afm("models", "install", "minilm-l6-v2", env=env)
    assert again.returncode == 0
    assert all(line.startswith("ok") for line in again.stdout.splitlines())  # nothing re-installed


def test_classify_prints_jsonl():
    out = afm("classify", "-", stdin='I am allergic to peanuts.\n{"text": "thanks!"}\n[!] window seat\n')
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["label"] for r in rows] == ["CRITICAL", "TRIVIAL", "CRITICAL"]
    assert all(set(r) >= {"text", "label", "scores"} for r in rows)


def test_pack_a_history_with_an_image_and_a_pdf_at_each_tier(tmp_path):
    """The CLI's history JSON takes content parts; the image comes back whole, as a thumbnail or named."""
    from afm_local import FocusManager
    from afm_local.core.accounting import content_text
    from tests.support.media import file_part, image_part, text
    from tests.support.real import installed, shared_components

    if not installed("multilingual-e5-small"):
        pytest.skip("run `afm-local models install`")
    history = [
        {
            "role": "user",
            "content": [text("our pricing table screenshot"), image_part("png/pricing_en.png", "high")],
            "importance": "RELEVANT",
        },
        {"role": "assistant", "content": "Thanks, I have the table. The Team plan looks like the best fit for you."},
        {"role": "user", "content": [text("and the agreement"), file_part("pdf/agreement_en.pdf")]},
        {"role": "assistant", "content": "Got it. I will check the agreement against the pricing."},
    ]
    query = "What does the Team plan cost per month?"
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"messages": history, "query": query}))
    fm = FocusManager(components=shared_components())  # the same engine in-process picks a budget per tier
    fm.add_messages(history)
    budgets = {}
    for budget in range(60, 1400, 20):
        budgets.setdefault(fm.build_context(query, budget).items[0].fidelity.value, budget)
    assert {"full", "compressed", "placeholder"} <= set(budgets)
    for fidelity in ("full", "compressed", "placeholder"):
        out = afm("pack", str(path), "--budget", str(budgets[fidelity]), "--format", "json")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["items"][0]["fidelity"] == fidelity and data["tokens_used"] <= budgets[fidelity]
        agreement = data["items"][2]
        assert agreement["attachments"][0]["name"] == "agreement_en.pdf" and "agreement_en.pdf" in agreement["reason"]
        if agreement["fidelity"] == "full":  # sent as its text
            sent = " ".join(" ".join(content_text(m["content"]).split()) for m in data["messages"])
            assert "15 October 2025" in sent
        first = data["messages"][0]["content"]
        if fidelity == "placeholder":
            assert first.startswith("[Turn 1 · user:")
        else:
            url = first[1]["image_url"]["url"]
            assert url.startswith("data:image/png" if fidelity == "full" else "data:image/jpeg")
    text_out = afm("pack", str(path), "--budget", str(budgets["compressed"]))
    assert text_out.returncode == 0 and "[image part, detail low: data:image/jpeg;base64," in text_out.stdout


def test_pack_prints_an_agent_history_as_text():
    """An assistant message that only calls tools has no content: the text format names its calls."""
    out = afm("pack", str(EXAMPLES / "agent_trip.json"), "--budget", "600", "--format", "text")
    assert out.returncode == 0, out.stderr
    assert "[calls " in out.stdout and "--- tool" in out.stdout
