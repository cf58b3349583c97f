"""Fixtures for the tests that need the real token counter, embedder and guard: each is skipped, with the
command that fixes it, when its model file is not installed."""

from __future__ import annotations

import pytest

from afm_local.text.guard import SummaryGuard

from real import FIX, installed


@pytest.fixture(scope="session")
def counter():
    if not installed("tiktoken"):
        pytest.skip(f"tiktoken vocabulary not installed; run `{FIX}`")
    from afm_local.local.tokens import TiktokenCounter

    return TiktokenCounter()


@pytest.fixture(scope="session")
def embedder():
    if not installed("embedder"):
        pytest.skip(f"MiniLM embedder not installed; run `{FIX}`")
    from afm_local.local.embedding import OnnxEmbedder

    return OnnxEmbedder(threads=1)


@pytest.fixture(scope="session")
def guard(embedder, counter):
    return SummaryGuard(embedder, counter)
