"""Observers of the consumer's outcomes, in the vocabulary the Go and Java runtimes share.

docs/DESIGN.md ("Observability") names them: ``PrometheusMetrics`` exposes
``msgcontract_messages_processed_total{handler,event_type,outcome}``,
``msgcontract_handler_duration_seconds``, ``msgcontract_retry_delay_seconds`` and
``msgcontract_end_to_end_latency_seconds`` with prometheus_client (install
``msgcontract-runtime[prometheus]``), and as ``KafkaConsumerLoop(lag=...)`` also
``msgcontract_consumer_lag_messages{group,topic,partition}``;
``JsonLog`` writes one JSON line per outcome with the shared field names and
needs nothing. Pass one, or ``fan_out(a, b)``, as ``Consumer(observer=...)``.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
from collections.abc import Callable
from typing import Any

from msgcontract_runtime.consumer import DeadLetter, Observer, Outcome, Retry


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    b = [start]
    for _ in range(count - 1):
        b.append(b[-1] * factor)  # as Go's ExponentialBuckets computes them
    return tuple(b)


HANDLER_DURATION_BUCKETS = _exponential(0.001, 2, 16)
"""1 ms doubling, 16 buckets, as in Go and Java (no integer edge and none
below 0.001, so every client writes the same le text)."""

RETRY_DELAY_BUCKETS = (0.25, 0.5, 1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64.5, 128.5, 256.5, 512.5, 1024.5, 2048.5, 4096.5)
"""Retry delay buckets in seconds, as in Go and Java."""

END_TO_END_BUCKETS = _exponential(0.001, 2, 22)
"""End-to-end latency buckets: 1 ms (occurred_at's resolution) doubling, 22
buckets, to 2097.152 s, as in Go and Java."""


class PrometheusMetrics:
    """The consumer's metrics on a prometheus_client registry.

    It turns prometheus_client's ``_created`` series off
    (``disable_created_metrics``, process-wide), so a scrape shows the same
    series as the Go and Java runtimes. The consumer-lag gauge is registered
    on the first ``lag`` report, so a service without Kafka exposes none.
    """

    def __init__(self, registry: Any | None = None) -> None:
        import prometheus_client as pc

        pc.disable_created_metrics()  # type: ignore[no-untyped-call]
        reg = registry if registry is not None else pc.REGISTRY
        self._registry = reg
        self._lag: Any | None = None
        self.processed = pc.Counter(
            "msgcontract_messages_processed_total",
            "Deliveries that reached a final outcome: handled, deduplicated, retry_scheduled, dead_lettered "
            "or conflict.",
            ["handler", "event_type", "outcome"], registry=reg,
        )
        self.handler_duration = pc.Histogram(
            "msgcontract_handler_duration_seconds", "Handler run time, successful or not.",
            ["handler", "event_type"], buckets=HANDLER_DURATION_BUCKETS, registry=reg,
        )
        self.retry_delay = pc.Histogram(
            "msgcontract_retry_delay_seconds", "Backoff delay of each retry scheduled.",
            ["handler", "event_type"], buckets=RETRY_DELAY_BUCKETS, registry=reg,
        )
        self.end_to_end = pc.Histogram(
            "msgcontract_end_to_end_latency_seconds",
            "Time from the envelope's occurred_at (the producer's clock) to the commit of the transaction "
            "holding the claim and the handler's effect, per delivery handled; a retried message's backoff "
            "included.",
            ["handler", "event_type"], buckets=END_TO_END_BUCKETS, registry=reg,
        )

    def __call__(self, o: Outcome) -> None:
        label = o.label
        if label is None:
            return
        self.processed.labels(o.handler, o.event_type, label).inc()
        if not math.isnan(o.handler_seconds):
            self.handler_duration.labels(o.handler, o.event_type).observe(o.handler_seconds)
        if isinstance(o.decision, Retry):
            self.retry_delay.labels(o.handler, o.event_type).observe(o.decision.delay_ms / 1000.0)
        if not math.isnan(o.end_to_end_seconds):
            self.end_to_end.labels(o.handler, o.event_type).observe(o.end_to_end_seconds)


    def _lag_gauge(self) -> Any:
        if self._lag is None:
            import prometheus_client as pc

            self._lag = pc.Gauge(
                "msgcontract_consumer_lag_messages",
                "Records of a partition behind its high watermark, after this consumer's last fetch.",
                ["group", "topic", "partition"], registry=self._registry,
            )
        return self._lag

    def lag(self, group: str, topic: str, partition: int, records: int) -> None:
        """Sets the consumer lag of a partition (msgcontract_runtime.kafka.LagObserver)."""
        self._lag_gauge().labels(group, topic, str(partition)).set(max(records, 0))

    def forget(self, group: str, topic: str, partition: int) -> None:
        """Drops a partition's lag series: the member let it go."""
        with contextlib.suppress(KeyError):  # KeyError: never reported
            self._lag_gauge().remove(group, topic, str(partition))


def trace_ids(traceparent: str) -> tuple[str, str] | None:
    """The trace and span ids of a W3C traceparent, None for anything else."""
    tp = traceparent
    if len(tp) < 55 or tp[2] != "-" or tp[35] != "-" or tp[52] != "-":
        return None
    return tp[3:35], tp[36:52]


def log_fields(o: Outcome) -> dict[str, Any]:
    """The shared log fields of an outcome: handler, topic, message_id, biz_key,
    retry_count, event_type, trace_id, span_id, outcome, and on failures
    code, delay_seconds or reason, and error."""
    f: dict[str, Any] = {"handler": o.handler, "topic": o.topic}
    env = o.envelope
    if env is not None:
        f.update(message_id=env.message_id, biz_key=env.biz_key, retry_count=env.retry_count,
                 event_type=env.event_type)
        ids = trace_ids(env.trace.traceparent)
        if ids is not None:
            f["trace_id"], f["span_id"] = ids
    f["outcome"] = o.label
    d = o.decision
    if isinstance(d, Retry):
        f.update(code=d.next_envelope.last_error.code, delay_seconds=d.delay_ms / 1000.0,
                 error=d.next_envelope.last_error.message)
    elif isinstance(d, DeadLetter):
        f.update(reason=d.reason, code=d.code, error=d.error)
    return f


class JsonLog:
    """One JSON log line per final outcome, written to sink (print by default)."""

    def __init__(self, sink: Callable[[str], None] = print) -> None:
        self.sink = sink

    def __call__(self, o: Outcome) -> None:
        label = o.label
        if label is None:
            return
        failed = isinstance(o.decision, (Retry, DeadLetter))
        line: dict[str, Any] = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "level": "WARN" if failed else "INFO",
            "msg": "msgcontract: " + label.replace("_", " "),
        }
        line.update(log_fields(o))
        self.sink(json.dumps(line, separators=(",", ":")))


def fan_out(*observers: Observer) -> Observer:
    """One observer calling each of observers in turn."""

    def observe(o: Outcome) -> None:
        for ob in observers:
            ob(o)

    return observe
