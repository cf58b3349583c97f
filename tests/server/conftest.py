"""What the proxy tests share: a strict loopback upstream, one per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.upstream import Upstream


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    server = Upstream().start()
    yield server
    server.stop()
