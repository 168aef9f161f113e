"""Prometheus metrics of one app instance (own registry, so several apps can live in one process)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LAYOUT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.requests = Counter(
            "penrose_requests", "HTTP requests served", ["method", "route", "status"], registry=self.registry
        )
        self.errors = Counter(
            "penrose_errors",
            "Diagram requests that failed, by kind "
            "(diagram, render, invalid-request, too-large, timeout, layout, worker-crash, internal)",
            ["kind"],
            registry=self.registry,
        )
        self.cache_hits = Counter(
            "penrose_cache_hits",
            "Cache hits: 'result' = finished rendering reused, 'energy' = compiled energy reused",
            ["cache"],
            registry=self.registry,
        )
        self.layout_seconds = Histogram(
            "penrose_layout_seconds",
            "Wall time of a layout in its worker (compile + optimize + render)",
            buckets=LAYOUT_BUCKETS,
            registry=self.registry,
        )
        self.rejections = Counter(
            "penrose_rejections",
            "Requests turned away before a layout started, by reason (queue-full, queue-timeout, "
            "body-budget, shutting-down: answered 503 with Retry-After; client-gone: dropped)",
            ["reason"],
            registry=self.registry,
        )
        self.worker_restarts = Counter(
            "penrose_worker_restarts",
            "Layout workers replaced, by reason (crash, memory, recycle)",
            ["reason"],
            registry=self.registry,
        )
        # Read when scraped (set_function), from the pool and the body limiter.
        self.queue_depth = Gauge(
            "penrose_queue_depth", "Requests waiting for a layout worker", registry=self.registry
        )
        self.busy_workers = Gauge(
            "penrose_busy_workers", "Layout workers running a job", registry=self.registry
        )
        self.body_bytes = Gauge(
            "penrose_body_bytes_held",
            "Request-body bytes held in memory, all requests",
            registry=self.registry,
        )
