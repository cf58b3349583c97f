"""What the engine reports about each of its operations, to an observer that asks (opt-in).

A ``FocusManager`` given an ``Observer`` hands it one ``Operation`` record when an ingest or a build
ends: timestamps, sizes, the packed context, any error. What becomes of it is the observer's business:
``afm_local.integrations.otel`` makes OpenTelemetry spans of it, with the ``gen_ai.memory.*``
attributes. The engine imports no telemetry library and pays nothing when no observer is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .types import Context, Message

# The operation names of OpenTelemetry's GenAI memory conventions: ingest creates records, a build searches them.
OperationName = Literal["create_memory", "search_memory"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One ingest (``create_memory``) or build (``search_memory``), as it ended."""

    name: OperationName
    memory_id: str | None  # the session, when the manager has one
    start_ns: int
    end_ns: int
    history: int  # messages in the history afterwards
    added: Sequence[Message] = ()  # create_memory: the new records
    query: str | None = None  # search_memory
    context: Context | None = None  # search_memory, when it succeeded
    error: BaseException | None = None


class Observer(Protocol):
    """Receives every operation of the managers it is given to."""

    def record(self, operation: Operation) -> None: ...
