"""Tool-call units: an assistant message that calls tools and the tool messages that answer it, packed as one.

An API accepts a tool result only right after the call it answers, and a call only with every one of
its results, so the two are never separated: ingest makes them one history entry (``group``) with its
own Full, Compressed and Placeholder forms, the packer chooses one fidelity for the whole unit, and
the render expands it back into the API messages (Full, Compressed) or one placeholder line that
names the tools and the gist of their results. A unit whose results have not all arrived yet waits
(``group`` hands it back as open) and is not sent: a call without its results is not valid anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .errors import InvalidInput
from .turns import Turn


@dataclass(frozen=True, slots=True)
class ToolUnit:
    """One assistant turn with tool calls and the tool turns that answer every call, in the given order."""

    call: Turn
    results: tuple[Turn, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return (self.call, *self.results)

    @property
    def tools(self) -> tuple[str, ...]:
        """The names of the tools called, each once, in call order."""
        return tuple(dict.fromkeys(c.name for c in self.call.tool_calls))

    def with_texts(self, call_text: str, result_texts: Sequence[str]) -> ToolUnit:
        """The same unit with other texts (a compressed form): calls, ids and order unchanged."""
        results = tuple(replace(r, content=t) for r, t in zip(self.results, result_texts, strict=True))
        return ToolUnit(replace(self.call, content=call_text), results)


@dataclass(frozen=True, slots=True)
class UnitForms:
    """A unit's two sendable forms: whole, and with its texts compressed (or the same when nothing saves)."""

    full: ToolUnit
    compressed: ToolUnit


Entry = Turn | ToolUnit


def group(turns: Sequence[Turn], open_turns: Sequence[Turn] = ()) -> tuple[list[Entry], tuple[Turn, ...]]:
    """History entries from ``turns``: each tool-calling assistant turn with the tool turns that answer it
    becomes one ``ToolUnit`` once every call is answered; other turns stay as they are. ``open_turns``
    is a unit left open by an earlier batch; the turns of a unit still open at the end come back, for
    the next batch. ``InvalidInput`` for a result that answers no open call, or a call left unanswered
    before another message."""
    entries: list[Entry] = []
    pending = list(open_turns)
    for turn in turns:
        if pending:
            waiting = waiting_calls(pending)
            if turn.role == "tool" and turn.tool_call_id in waiting:
                pending.append(turn)
                if len(waiting) == 1:
                    entries.append(ToolUnit(pending[0], tuple(pending[1:])))
                    pending = []
                continue
            raise InvalidInput(f"tool call {waiting[0][:64]!r} has no tool result before the next message")
        if turn.role == "tool" and turn.tool_call_id is not None:
            raise InvalidInput(
                f"tool result {turn.tool_call_id[:64]!r} answers no call of the assistant message before it"
            )
        if turn.tool_calls:
            pending = [turn]
        else:
            entries.append(turn)
    return entries, tuple(pending)


def waiting_calls(open_turns: Sequence[Turn]) -> list[str]:
    """The ids of the calls of an open unit (its assistant turn, then the results that arrived) still waiting
    for a result, in call order."""
    answered = {r.tool_call_id for r in open_turns[1:]}
    return [c.id for c in open_turns[0].tool_calls if c.id not in answered]


def transcript(unit: ToolUnit) -> str:
    """A unit as one text, for its embedding, its classification and the structured render: the
    assistant's words, then one line per call, ``name(arguments) -> result``."""
    results = {r.tool_call_id: r.content for r in unit.results}
    lines = [unit.call.content.strip()] if unit.call.content.strip() else []
    lines += [f"{c.name}({c.arguments}) -> {results.get(c.id, '')}" for c in unit.call.tool_calls]
    return "\n".join(lines)


def results_text(unit: ToolUnit) -> str:
    """What the tools answered, one result per line: the gist of a unit's placeholder is named from it."""
    return "\n".join(r.content for r in unit.results)


def tools_label(unit: ToolUnit) -> str:
    """Who a unit's placeholder line names: ``tool get_weather`` or ``tools get_weather, get_time``."""
    names = unit.tools
    return ("tool " if len(names) == 1 else "tools ") + ", ".join(names)
