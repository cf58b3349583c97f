"""OpenTelemetry spans of ingest and build_context, read back from the SDK's in-memory exporter."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from afm_local import BudgetTooSmall, FocusManager
from afm_local.cli import build_parser, server_settings
from afm_local.integrations.otel import OtelObserver
from tests.support.fakes import fake_components

CONSTRAINT = "[!] I am allergic to peanuts; never suggest peanuts."
HISTORY = [{"role": "user", "content": CONSTRAINT}] + [
    {"role": "user", "content": f"Day {i}: we walk along the river, see the temples and the old market."}
    for i in range(20)
]


def traced(capture_content: bool) -> tuple[FocusManager, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = OtelObserver(provider, capture_content=capture_content)
    return FocusManager(components=fake_components(), observer=observer, memory_id="session-1"), exporter


def test_ingest_and_build_are_spans_with_the_memory_attributes_and_no_text():
    fm, exporter = traced(capture_content=False)
    fm.add_messages(HISTORY)
    ctx = fm.build_context("Where should we eat?", 120)
    ingest, build = exporter.get_finished_spans()
    assert (ingest.name, build.name) == ("create_memory", "search_memory")
    assert ingest.attributes["gen_ai.operation.name"] == "create_memory"
    assert ingest.attributes["gen_ai.memory.store.id"] == "session-1"
    assert ingest.attributes["gen_ai.memory.record.count"] == 21 and ingest.attributes["afm.importance.critical"] == 1
    assert ingest.attributes["afm.tokens.added"] == sum(m.tokens_full for m in fm.messages)
    assert build.attributes["afm.budget_tokens"] == 120 and build.attributes["afm.tokens.used"] == ctx.tokens_used
    counts = {k: build.attributes[f"afm.fidelity.{k}"] for k in ("full", "compressed", "placeholder", "dropped")}
    assert counts == ctx.fidelity_counts and build.attributes["gen_ai.memory.record.count"] == 21 - counts["dropped"]
    assert build.end_time >= build.start_time > ingest.end_time >= ingest.start_time
    text = json.dumps([dict(s.attributes) for s in (ingest, build)])
    assert "peanuts" not in text and "Where should we eat" not in text  # no message content unless asked


def test_content_is_recorded_only_when_asked_and_a_failed_build_is_an_error_span():
    fm, exporter = traced(capture_content=True)
    fm.add_messages(HISTORY[:1])
    fm.build_context("Where should we eat?", 200)
    with pytest.raises(BudgetTooSmall):
        fm.build_context("Where should we eat?", 10)
    ingest, build, failed = exporter.get_finished_spans()
    assert json.loads(ingest.attributes["gen_ai.memory.records"])[0]["content"] == CONSTRAINT[4:]
    assert build.attributes["gen_ai.memory.query.text"] == "Where should we eat?"
    assert "peanuts" in build.attributes["gen_ai.memory.records"]
    assert failed.status.status_code is StatusCode.ERROR and failed.attributes["error.type"] == "BudgetTooSmall"


def test_serve_takes_otel_as_a_flag():
    assert server_settings(build_parser().parse_args(["serve", "--otel"])).otel is True
    assert server_settings(build_parser().parse_args(["serve"])).otel is False
