"""OpenTelemetry spans for AFM's operations (the ``otel`` extra), following the GenAI memory conventions.

``OtelObserver`` is a ``core.telemetry.Observer``: give it to a ``FocusManager`` (``afm-local serve --otel``
gives it to every session) and each ingest becomes a ``create_memory`` span and each build a
``search_memory`` span, with ``gen_ai.operation.name``, ``gen_ai.memory.store.id`` (the session) and
``gen_ai.memory.record.count`` (records added, or history entries sent), and AFM's own numbers under
``afm.*``: the budget, the tokens used and added, the history's size and the fidelity counts. No message
text is recorded unless asked (``capture_content=True`` or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
set to true): then the query (``gen_ai.memory.query.text``) and the records (``gen_ai.memory.records``, JSON).
This module depends on the core alone, so the server can use it.
"""

from __future__ import annotations

import json
import os
from typing import Any

try:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode, TracerProvider
except ImportError as exc:  # pragma: no cover - the message names the fix
    raise ImportError("OpenTelemetry is not installed: pip install 'afm-local[otel]'", name=exc.name) from exc

from .._version import __version__
from ..core.telemetry import Operation
from ..core.vocabulary import Importance

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


class OtelObserver:
    """Makes one span per operation, on ``tracer_provider`` (the global one by default)."""

    def __init__(self, tracer_provider: TracerProvider | None = None, capture_content: bool | None = None) -> None:
        self.tracer = trace.get_tracer("afm_local", __version__, tracer_provider=tracer_provider)
        if capture_content is None:
            capture_content = os.environ.get(CONTENT_ENV, "").lower() in ("1", "true", "yes")
        self.capture_content = capture_content

    def record(self, operation: Operation) -> None:
        span = self.tracer.start_span(
            operation.name, kind=SpanKind.INTERNAL, start_time=operation.start_ns, attributes=attributes(operation)
        )
        if self.capture_content:
            span.set_attributes(content(operation))
        if operation.error is not None:
            span.set_attribute("error.type", type(operation.error).__name__)
            span.set_status(Status(StatusCode.ERROR, str(operation.error).splitlines()[0]))
        span.end(end_time=operation.end_ns)


def attributes(op: Operation) -> dict[str, Any]:
    """The attributes of ``op`` that carry no message text."""
    out: dict[str, Any] = {"gen_ai.operation.name": op.name, "afm.history.messages": op.history}
    if op.memory_id:
        out["gen_ai.memory.store.id"] = op.memory_id
    if op.name == "create_memory":
        out["gen_ai.memory.record.count"] = len(op.added)
        out["afm.tokens.added"] = sum(m.tokens_full for m in op.added)
        out["afm.importance.critical"] = sum(m.importance is Importance.CRITICAL for m in op.added)
    ctx = op.context
    if ctx is not None:
        counts = ctx.fidelity_counts  # the entries sent, without building the per-message account
        out["gen_ai.memory.record.count"] = sum(n for name, n in counts.items() if name != "dropped")
        out.update(
            {"afm.budget_tokens": ctx.budget_tokens, "afm.tokens.used": ctx.tokens_used, "afm.render": ctx.render}
        )
        out.update({f"afm.fidelity.{name}": count for name, count in ctx.fidelity_counts.items()})
    return out


def content(op: Operation) -> dict[str, Any]:
    """The attributes that carry text, recorded only when asked."""
    out: dict[str, Any] = {}
    if op.query is not None:
        out["gen_ai.memory.query.text"] = op.query
    records: list[dict[str, Any]] = [{"id": m.id, "content": m.content} for m in op.added]
    if op.context is not None:
        sent = [i for i in op.context.items if i.text]
        records = [{"id": str(i.index), "content": i.text, "score": round(i.score, 4)} for i in sent]
    if records:
        out["gen_ai.memory.records"] = json.dumps(records, ensure_ascii=False)
    return out


def configure(service_name: str = "afm-local") -> None:
    """``afm-local serve --otel``: unless a tracer provider is already set (``opentelemetry-instrument``), set
    the SDK's, exporting over OTLP/HTTP where the standard ``OTEL_EXPORTER_OTLP_*`` variables say (by
    default http://localhost:4318)."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SDKTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = SDKTracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
