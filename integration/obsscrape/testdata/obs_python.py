"""The Python side of integration/obsscrape: the scenario every language runs
(handled, duplicate, a retry then handled, an envelope that does not decode)
on msgcontract_runtime's Consumer with msgcontract_runtime.observe, then
/metrics on an ephemeral loopback port, printed as "port N", until stdin
closes."""

from __future__ import annotations

import sqlite3
import sys
import time

import prometheus_client

import msgcontract_runtime as mc
from msgcontract.v1 import envelope_pb2
from msgcontract_runtime.observe import JsonLog, PrometheusMetrics, fan_out


def _key(m: envelope_pb2.LastError) -> str:
    b = mc.BizKeyBuilder()
    b.literal("range:")
    b.string("range", m.range)
    return b.key()


SPEC = mc.EventSpec(
    full_name="msgcontract.v1.LastError", topic="obs", event_type="OBS_EVENT", biz_key_template="range:{range}",
    retry=mc.RetryPolicy(base_ms=1000, multiplier=2.0, jitter_ms=0, max_delay_ms=60000, max_retries=1),
    rules=mc.ErrorRules(ranges=(mc.ErrorRange(50000, 59999, True, "system"),), unclassified_retryable=False),
    target_state="", message_type=envelope_pb2.LastError, key_function=_key,
)


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def handler(tx: object, m: envelope_pb2.LastError, env: envelope_pb2.Envelope) -> None:
    if m.range == "b" and env.retry_count == 0:
        raise SPEC.rules.error(50301, "ledger down")


def main() -> None:
    reg = prometheus_client.CollectorRegistry()
    log = JsonLog(lambda line: print(line, file=sys.stderr))
    c = mc.Consumer(SPEC, "obs", handler, observer=fan_out(PrometheusMetrics(reg), log))
    conn = sqlite3.connect(":memory:")
    mc.migrate(conn)
    a = mc.encode(mc.new_envelope(SPEC, envelope_pb2.LastError(range="a")))
    c.process(conn, a)
    c.process(conn, a)
    b = mc.new_envelope(SPEC, envelope_pb2.LastError(range="b"))
    b.trace.traceparent = TRACEPARENT
    d = c.process(conn, mc.encode(b))
    assert isinstance(d, mc.Retry), d
    # The transport's part: deliver the retry when it is due.
    time.sleep(max(0, d.next_envelope.not_before / 1000 - time.time()) + 0.01)
    c.process(conn, mc.encode(d.next_envelope))
    c.process(conn, b"not an envelope")
    server, _ = prometheus_client.start_http_server(0, addr="127.0.0.1", registry=reg)
    print(f"port {server.server_port}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
