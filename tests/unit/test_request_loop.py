"""A whole request packed: the history before the query and the agent's tool loop after it, one budget.

The property test builds random agent requests (an instruction with a constraint, history turns, a loop of
tool calls with short and long results, parallel calls) and random budgets, and holds every packed request
to: the budget (counted again here, message by message), OpenAI's rules (no orphan result, no call without
its results), the instruction verbatim at ``query_index`` with the loop after it, the newest result whole
when it fits, and every loop step either sent or named in a line (nothing dropped silently).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from afm_local import FocusManager, InvalidInput
from afm_local.core.accounting import sent_cost
from afm_local.core.errors import BudgetTooSmall
from afm_local.core.split import Split, loop_focus, split_turns
from afm_local.core.turns import ToolCall, Turn, as_turn
from tests.support.api_rules import chat_violations
from tests.support.fakes import fake_components

INSTRUCTION = "Refactor the billing code. Never touch the production database; staging only."


def step(i: int, result: str, name: str = "read_file") -> list[Turn]:
    call = ToolCall(f"c{i}", name, json.dumps({"path": f"billing/module_{i}.py"}))
    return [Turn("assistant", "", tool_calls=(call,)), Turn("tool", result, tool_call_id=f"c{i}")]


def request(results: list[str], history: list[str] = ()) -> list[Turn]:
    turns = [Turn("system", "You are a coding agent.")]
    turns += [Turn("user" if k % 2 == 0 else "assistant", text) for k, text in enumerate(history)]
    turns.append(Turn("user", INSTRUCTION))
    for i, result in enumerate(results):
        turns += step(i, result)
    return turns


def test_the_split_puts_the_loop_after_the_query_and_the_preamble_first():
    turns = request(["def a(): pass"], ["hi", "hello"])
    split = split_turns(turns)
    assert split.preamble == "You are a coding agent." and split.query == INSTRUCTION
    assert [t.role for t in split.history] == ["user", "assistant"] and [t.role for t in split.loop] == [
        "assistant",
        "tool",
    ]
    assert "read_file" in loop_focus(split.query, split.loop) and INSTRUCTION in loop_focus(split.query, split.loop)
    with pytest.raises(InvalidInput, match="user message with text"):
        split_turns([Turn("assistant", "hi")])


def test_a_call_left_without_its_result_is_refused_before_or_after_the_query():
    fm = FocusManager(components=fake_components())
    open_call = Turn("assistant", "", tool_calls=(ToolCall("c9", "f"),))
    with pytest.raises(InvalidInput, match="'c9' has no tool result before the query"):
        fm.pack_split(Split(None, (Turn("user", "hi"), open_call), "q"), 500)
    fm = FocusManager(components=fake_components())
    with pytest.raises(InvalidInput, match="'c9' has no tool result before the end of the request"):
        fm.pack_split(Split(None, (), "q", (open_call,)), 500)


def long_result(i: int, lines: int) -> str:
    return "\n".join(f"line {k} of module {i}: total = amount * rate  # ledger {k * i % 97}" for k in range(lines))


results = st.lists(
    st.one_of(
        st.sampled_from(["ok", "18C sunny", "no such file"]), st.integers(3, 400).map(lambda n: long_result(n, n))
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    results=results,
    history=st.lists(st.sampled_from(["hi", "Use Python 3.12.", "Thanks!"]), max_size=6),
    budget=st.integers(40, 6000),
)
def test_every_packed_request_holds_the_budget_the_rules_and_the_instruction(results, history, budget):
    turns = request(results, history)
    fm = FocusManager(components=fake_components())
    try:
        ctx = fm.pack_split(split_turns(turns), budget)
    except BudgetTooSmall as exc:  # only when the instruction and the preamble alone do not fit
        assert exc.minimum > budget
        return
    sent = ctx.messages
    assert ctx.tokens_used <= budget
    assert sent_cost(fm.components.counter, sent, fm.config) == ctx.tokens_used
    assert chat_violations(sent) == []
    assert sent[ctx.query_index] == {"role": "user", "content": INSTRUCTION}
    loop = sent[ctx.query_index + 1 :]
    said = "\n".join(str(m.get("content") or "") for m in loop)
    called = {c["id"] for m in loop for c in m.get("tool_calls") or ()}
    named = [f"c{i}" in called or f"billing/module_{i}.py" in said or "Turns " in said for i in range(len(results))]
    if budget >= 800:  # room for the lines: each step is sent, or a line names it (alone or in a run of turns)
        assert all(named), said
    newest = step(len(results) - 1, results[-1])
    whole = [as_turn(m) for m in loop[-2:]] == newest
    if not whole:  # the newest result is whole unless it alone cannot fit beside the instruction
        assert fm.messages[-1].tokens_full + ctx.tokens_used > budget
