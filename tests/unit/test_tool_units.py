"""Tool-call units: grouped at ingest, packed as one, expanded back into valid API messages.

The property test builds random agent histories (parallel calls, long and short results, JSON and
prose, a tagged constraint) and random budgets, and holds every packed chat to OpenAI's rules (no
orphan tool message, no call without its results), to the budget, and to the constraint verbatim.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from afm_local import FocusManager, InvalidInput, Turn
from afm_local.core.accounting import sent_cost
from afm_local.core.errors import BudgetTooSmall
from afm_local.core.turns import ToolCall, as_turn, chat_message
from afm_local.core.units import ToolUnit, group, transcript
from afm_local.text.tool_results import DIGEST_MAX_TOKENS, compress_result
from tests.support.api_rules import chat_violations
from tests.support.fakes import WordCounter, fake_components

CONSTRAINT = "[!] I am severely allergic to peanuts: never suggest any dish or snack with peanuts."


def call(call_id: str, name: str = "get_weather", arguments: str = '{"city": "Paris"}') -> ToolCall:
    return ToolCall(call_id, name, arguments)


def test_as_turn_reads_openai_and_flat_tool_calls_and_writes_them_back():
    openai = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        ],
    }
    turn = as_turn(openai)
    assert turn.tool_calls == (call("c1"),) and turn.content == ""
    assert chat_message(turn) == openai
    flat = as_turn(
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f", "arguments": {"a": 1}}]}
    )
    assert flat.tool_calls == (ToolCall("c1", "f", '{"a": 1}'),)
    result = as_turn({"role": "tool", "content": "18C", "tool_call_id": "c1"})
    assert chat_message(result) == {"role": "tool", "content": "18C", "tool_call_id": "c1"}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"role": "user", "content": "x", "tool_calls": [{"id": "c", "name": "f"}]}, "only an assistant"),
        ({"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]}, 'function "name"'),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "f"}, {"id": "c", "name": "g"}]},
            "share an id",
        ),
        ({"role": "assistant", "content": None}, "string"),
    ],
)
def test_bad_tool_calls_are_invalid_input(value, error):
    with pytest.raises(InvalidInput, match=error):
        as_turn(value)


def test_a_call_and_its_results_become_one_unit_and_an_open_unit_waits_for_the_next_batch():
    ask = Turn("assistant", "Let me check.", tool_calls=(call("a"), call("b", "get_time", "{}")))
    first, second = Turn("tool", "18C sunny", tool_call_id="a"), Turn("tool", "14:05", tool_call_id="b")
    entries, open_turns = group([Turn("user", "hi"), ask, first])
    assert entries == [Turn("user", "hi")] and open_turns == (ask, first)
    entries, open_turns = group([second, Turn("assistant", "Sunny.")], open_turns)
    assert entries == [ToolUnit(ask, (first, second)), Turn("assistant", "Sunny.")] and open_turns == ()
    assert transcript(entries[0]) == 'Let me check.\nget_weather({"city": "Paris"}) -> 18C sunny\nget_time({}) -> 14:05'


@pytest.mark.parametrize(
    ("turns", "error"),
    [
        ([Turn("tool", "18C", tool_call_id="x")], "answers no call"),
        ([Turn("assistant", "", tool_calls=(call("a"),)), Turn("user", "and?")], "has no tool result"),
        ([Turn("assistant", "", tool_calls=(call("a"),)), Turn("tool", "r", tool_call_id="b")], "has no tool result"),
    ],
)
def test_orphans_in_the_input_are_refused(turns, error):
    with pytest.raises(InvalidInput, match=error):
        group(turns)


def test_a_long_tool_result_without_sentences_becomes_a_digest_that_says_what_was_left_out():
    counter = WordCounter()
    rows = "\n".join(json.dumps({"day": d, "temp": 10 + d % 7, "sky": "clear"}) for d in range(40))
    form = compress_result(rows, fake_components().compressor, counter, 0.35)
    lines = rows.splitlines()
    assert form.startswith(lines[0]) and lines[-1] in form and "lines left out]" in form
    assert form.endswith(f"[digest: {len(form.splitlines()) - 2} of 40 lines, {counter.count(rows)} tokens in all]")
    assert counter.count(form) < 0.5 * counter.count(rows)
    assert compress_result("18C sunny", fake_components().compressor, counter, 0.35) == "18C sunny"


def test_a_huge_log_becomes_a_bounded_digest_with_its_errors():
    counter = WordCounter()
    log = [f"2026-12-01 10:{i // 60:02d}:{i % 60:02d} INFO request {i} served in {i % 97} ms" for i in range(20_000)]
    log[12_345] = "2026-12-01 13:25:45 ERROR payment gateway timed out for order 88412"
    form = compress_result("\n".join(log), fake_components().compressor, counter, 0.35)
    assert counter.count(form) <= DIGEST_MAX_TOKENS + 20  # the notes between the kept lines are not counted in
    assert form.startswith(log[0]) and log[12_345] in form and log[-1] in form
    assert "[digest: " in form and "of 20000 lines" in form


def test_a_unit_is_sent_whole_compressed_or_as_one_line_naming_its_tools():
    fm = FocusManager(components=fake_components())
    rows = "\n".join(json.dumps({"hotel": f"H{i}", "price": 90 + i, "stars": 3}) for i in range(60))
    fm.add_messages(
        [
            {"role": "user", "content": CONSTRAINT},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "h", "name": "search_hotels", "arguments": "{}"}],
            },
            {"role": "tool", "content": rows, "tool_call_id": "h"},
            {"role": "assistant", "content": "I found sixty hotels in Paris."},
        ]
    )
    assert len(fm.messages) == 3 and fm.messages[1].unit is not None
    fidelities = set()
    for budget in (80, 200, 400, 2000):
        ctx = fm.build_context("Which hotel is cheapest?", budget)
        assert chat_violations(ctx.messages) == []
        assert ctx.tokens_used == sent_cost(fm.components.counter, ctx.messages, fm.config) <= budget
        item = ctx.items[1]
        fidelities.add(item.fidelity.value)
        assert item.tools == ("search_hotels",)
        if item.fidelity.value == "placeholder":
            assert item.text.startswith("[Turn 2 · tool search_hotels")
            assert not any(m.get("tool_calls") or m["role"] == "tool" for m in ctx.messages)
    assert fidelities >= {"placeholder", "full"}


TEXTS = st.sampled_from(
    [
        "The museum opens at nine and closes at six on weekdays.",
        "Sure.",
        "We could take the train to Lyon, which takes two hours, or fly in one hour.",
        "I prefer quiet hotels near the river, not chains.",
    ]
)
RESULTS = st.one_of(
    st.sampled_from(["18C sunny", "no results", "OK"]),
    st.integers(5, 80).map(lambda n: "\n".join(json.dumps({"row": i, "value": i * 7 % 13}) for i in range(n))),
    st.integers(2, 30).map(lambda n: " ".join(["The route passes through the old town and the harbour."] * n)),
)


@st.composite
def agent_histories(draw):
    """A random agent history: chat turns and tool-call units (1 to 3 parallel calls), one constraint anywhere
    between them."""
    blocks: list[list[dict]] = []
    for k in range(draw(st.integers(1, 14))):
        if draw(st.booleans()):
            blocks.append([{"role": draw(st.sampled_from(["user", "assistant"])), "content": draw(TEXTS)}])
            continue
        ids = [f"call_{k}_{j}" for j in range(draw(st.integers(1, 3)))]
        calls = [
            {
                "id": i,
                "type": "function",
                "function": {"name": draw(st.sampled_from(["search", "weather"])), "arguments": json.dumps({"q": i})},
            }
            for i in ids
        ]
        content = draw(st.sampled_from(["", "Checking."]))
        blocks.append(
            [{"role": "assistant", "content": content, "tool_calls": calls}]
            + [{"role": "tool", "content": draw(RESULTS), "tool_call_id": i} for i in ids]
        )
    blocks.insert(draw(st.integers(0, len(blocks))), [{"role": "user", "content": CONSTRAINT}])
    return [turn for block in blocks for turn in block]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=agent_histories(), budget=st.integers(60, 4000), render=st.sampled_from(["chat", "structured"]))
def test_random_agent_histories_never_produce_an_orphan_or_go_over_budget(history, budget, render):
    fm = FocusManager(components=fake_components())
    fm.add_messages(history)
    try:
        ctx = fm.build_context("Where should we eat tonight?", budget, "Be brief.", render=render)
    except BudgetTooSmall as err:  # only when the tagged constraint, the preamble and the query do not fit
        assert "tagged" in str(err) and err.minimum > budget
        return
    assert chat_violations(ctx.messages) == []
    assert ctx.tokens_used <= budget
    if render == "chat":
        assert ctx.tokens_used == sent_cost(fm.components.counter, ctx.messages, fm.config)
    assert any(CONSTRAINT[4:] in (m["content"] or "") for m in ctx.messages)
    assert ctx.messages[-1] == {"role": "user", "content": "Where should we eat tonight?"}
