"""The server's metrics: the Prometheus registry and counters, the artifact caches' hit counts, the
request-metrics ASGI layer with its access log, and the ``X-AFM-*`` headers a packed context answers with."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily

from ..core.types import Context
from ..core.vocabulary import FIDELITIES

access_log = logging.getLogger("afm_local.access")
CacheCounts = Callable[[], dict[str, tuple[int, int]]]


class Metrics:
    """The registry and every counter the server keeps; ``cache_counts`` gives the artifact caches' hits and
    misses by kind of cache."""

    def __init__(self, cache_counts: CacheCounts) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "afm_http_requests",
            "HTTP requests by route and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "afm_http_request_duration_seconds",
            "Request latency by route.",
            ["route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
        )
        self.tokens_saved = Counter(
            "afm_tokens_saved", "History tokens AFM kept out of the prompt.", ["route"], registry=self.registry
        )
        self.tokens_used = Counter(
            "afm_tokens_used", "Tokens of the packed contexts.", ["route"], registry=self.registry
        )
        self.appended = Counter("afm_messages_appended", "Messages committed to the store.", registry=self.registry)
        self.registry.register(CacheCollector(cache_counts))

    def count_context(self, ctx: Context, original: int, route: str) -> dict[str, str]:
        """The ``X-AFM-*`` headers of a packed context, with the token metrics counted."""
        headers = afm_headers(ctx, original)
        self.tokens_saved.labels(route=route).inc(int(headers["X-AFM-Tokens-Saved"]))
        self.tokens_used.labels(route=route).inc(ctx.tokens_used)
        return headers


def afm_headers(ctx: Context, original_tokens: int) -> dict[str, str]:
    counts = ctx.fidelity_counts
    return {
        "X-AFM-Tokens-Used": str(ctx.tokens_used),
        "X-AFM-Tokens-Saved": str(max(0, original_tokens - ctx.tokens_used)),
        "X-AFM-Budget": str(ctx.budget_tokens),
        "X-AFM-Fidelity": ",".join(f"{f.value}={counts.get(f.value, 0)}" for f in FIDELITIES),
    }


class MetricsMiddleware:
    """Request counts by route template and status, latency histograms (streams: until the end), and one
    access-log line a request: tenant, key id, method, route template, status, milliseconds. Never a
    path's ids, a body, a query or a key."""

    def __init__(self, app: Any, requests: Counter, latency: Histogram) -> None:
        self.app, self.requests, self.latency = app, requests, latency

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = [500]

        async def send_status(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or (
                "rejected" if status[0] in (400, 401, 403, 413, 415, 429) else "unmatched"
            )
            elapsed = time.perf_counter() - start
            self.requests.labels(route=label, method=scope.get("method", ""), status=str(status[0])).inc()
            self.latency.labels(route=label).observe(elapsed)
            who = scope.get("state", {}).get("principal")
            access_log.info(
                "tenant=%s key=%s %s %s %d %.1fms",
                who.tenant if who else "-",
                who.key_id if who else "-",
                scope.get("method", ""),
                label,
                status[0],
                elapsed * 1000,
            )


class CacheCollector:
    """Exports the artifact caches' hit and miss counters: ``counts()`` gives (hits, misses) by cache name."""

    def __init__(self, counts: Callable[[], dict[str, tuple[int, int]]]) -> None:
        self.counts = counts

    def collect(self) -> Any:
        hits = CounterMetricFamily("afm_cache_hits", "Artifact cache hits (memory or the store).", labels=["cache"])
        misses = CounterMetricFamily(
            "afm_cache_misses", "Artifact cache misses (the artifact was computed).", labels=["cache"]
        )
        for name, (hit, miss) in self.counts().items():
            hits.add_metric([name], hit)
            misses.add_metric([name], miss)
        yield hits
        yield misses

    def describe(self) -> list[Any]:
        return []
