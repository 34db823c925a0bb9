"""KafkaConsumerLoop and KafkaPublisher on a real broker: effect once, retry, poison, two members, PostgreSQL."""

from __future__ import annotations

import pathlib
import sqlite3
import threading
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import msgcontract_runtime as mc
from conftest import brokers
from kafkahelp import (
    dlq_meta,
    effects,
    pg_schema,
    publish_pay,
    publish_poison,
    read_topic,
    record_effect,
    sqlite_db,
    wait,
)
from msgcontract_runtime import kafka as mk, outbox, tracing


def test_duplicates_apply_once_sqlite(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=3)
    for i in range(20):
        publish_pay(pub, spec, pb, f"o-{i}", times=2)
    pub.close()
    db = sqlite_db(str(tmp_path / "biz.db"))
    consumers = [mc.Consumer(spec, "recon.pay", record_effect)]
    loop = mk.KafkaConsumerLoop(b, "recon", consumers, db, namespace=ns, partitions=3)
    try:
        wait(lambda: loop.counts.processed + loop.counts.deduped == 40, loop.step, "40 deliveries")
    finally:
        loop.close()
    assert (loop.counts.processed, loop.counts.deduped) == (20, 20)
    assert effects(db) == (20, 20)


def test_retry_then_success(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    publish_pay(pub, spec, pb, "flaky")
    publish_pay(pub, spec, pb, "steady")
    pub.close()
    calls: dict[str, int] = {}

    def handler(conn: Any, m: Any, env: Any) -> None:
        calls[m.order_id] = calls.get(m.order_id, 0) + 1
        record_effect(conn, m, env)
        if m.order_id == "flaky" and calls[m.order_id] <= 2:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", handler)], db, namespace=ns, partitions=1)
    try:
        wait(lambda: loop.counts.processed == 2, loop.step, "both processed")
    finally:
        loop.close()
    assert calls == {"flaky": 3, "steady": 1}
    assert loop.counts.retried == 2 and loop.counts.dead_lettered == 0
    assert effects(db) == (2, 2)  # the failed runs rolled back with their claims
    retries = read_topic(b, mk.retry_topic(ns, "order-event", "recon"), 2)
    counts = sorted(mc.decode(m.value()).retry_count for m in retries)
    assert counts == [1, 2]
    assert all(dict(m.headers())[mk.HEADER_TOPIC] == b"order-event" for m in retries)


def test_traced_loop_keeps_the_producers_trace_across_the_retry_topic(
    tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str,
) -> None:
    """Both attempts, the second read back from the retry topic, are CONSUMER spans of the producer's trace."""
    b = brokers()
    exp = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exp))
    env = mc.new_envelope(spec, pb.PaySuccess(order_id="traced", amount=100, currency="EUR"))
    with tp.get_tracer("test").start_as_current_span("order pay") as app:
        tracing.inject(env)
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    pub.publish(spec.topic, env)
    pub.close()
    runs: list[int] = []

    def handler(conn: Any, m: Any, e: Any) -> None:
        runs.append(e.retry_count)
        if len(runs) == 1:
            raise mc.RetryableError(50301, "system", "ledger answered 503")
        record_effect(conn, m, e)

    db = sqlite_db(str(tmp_path / "biz.db"))
    traced = mc.Consumer(spec, "recon.pay", handler, tracer=tracing.Tracing(tp, "kafka", "recon"))
    loop = mk.KafkaConsumerLoop(b, "recon", [traced], db, namespace=ns, partitions=1)
    try:
        wait(lambda: loop.counts.processed == 1, loop.step, "the retry handled")
    finally:
        loop.close()
    assert runs == [0, 1] and effects(db) == (1, 1)
    spans = [s for s in exp.get_finished_spans()
             if s.kind == SpanKind.CONSUMER and (s.attributes or {}).get(tracing.OUTCOME) != "deferred"]
    got = [dict(s.attributes or {}) for s in spans]
    assert [a[tracing.OUTCOME] for a in got] == ["retry_scheduled", "handled"]
    assert [a[tracing.RETRY_COUNT] for a in got] == [0, 1]
    assert float(got[0][tracing.RETRY_DELAY]) > 0  # type: ignore[arg-type]
    for s, a in zip(spans, got, strict=True):
        assert s.context is not None and s.context.trace_id == app.get_span_context().trace_id
        assert (a[tracing.SYSTEM], a[tracing.DESTINATION], a[tracing.CONSUMER_GROUP]) == ("kafka", spec.topic, "recon")
        assert (a[tracing.BIZ_KEY], a[tracing.MESSAGE_ID]) == (env.biz_key, env.message_id)
        assert tracing.PARTITION in a and tracing.KAFKA_OFFSET in a, a  # the record's place, from its delivery id
    assert [a.get(tracing.ERROR_TYPE) for a in got] == ["50301", None]


def test_poison_is_dead_lettered(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=1)
    publish_poison(pub, spec, pb, ns)
    pub.close()

    def handler(conn: Any, m: Any, env: Any) -> None:
        if m.order_id == "refused":
            raise mc.NonRetryableError(40001, "business", "order unknown")
        record_effect(conn, m, env)

    db = sqlite_db(str(tmp_path / "biz.db"))
    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", handler)], db, namespace=ns, partitions=1)
    try:
        wait(lambda: loop.counts.dead_lettered == 3 and loop.counts.processed == 1, loop.step, "3 dead letters")
    finally:
        loop.close()
    dl = read_topic(b, mk.dlq_topic(ns, "order-event"), 3)
    reasons = sorted((dlq_meta(m)["reason"], dlq_meta(m)["code"]) for m in dl)
    assert reasons == [("decode", -3), ("decode", -3), ("non_retryable", 40001)]
    refused = next(m for m in dl if dlq_meta(m)["reason"] == "non_retryable")
    assert dlq_meta(refused)["handler"] == "recon.pay" and dlq_meta(refused)["attempts"] == 1
    assert mc.decode(refused.value()).biz_key == "order_id:refused:PAY_SUCCESS"
    assert effects(db) == (1, 1)


def test_two_members_share_partitions_once(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """Two members of one group split the partitions; every event, published twice, is applied once.

    librdkafka's cooperative-sticky assignor balances the member's partition
    counts, not each topic's, so the later member may hold only retry
    partitions: the test asserts the split and the single effect, not who
    applied what.
    """
    b = brokers()
    path = str(tmp_path / "biz.db")
    dbs = [sqlite_db(path), sqlite_db(path)]
    consumers = [mc.Consumer(spec, "recon.pay", record_effect)]
    loops = [mk.KafkaConsumerLoop(b, "recon", consumers, db, namespace=ns, partitions=4) for db in dbs]
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=4)

    def step() -> None:
        for lp in loops:
            lp.step(0.05)

    try:
        wait(lambda: all(lp.assigned for lp in loops), step, "both members hold partitions")
        for i in range(40):
            publish_pay(pub, spec, pb, f"o-{i}", times=2)
        wait(lambda: sum(lp.counts.processed + lp.counts.deduped for lp in loops) >= 80, step, "80 deliveries")
        assert not set(loops[0].assigned) & set(loops[1].assigned)
    finally:
        pub.close()
        for lp in loops:
            lp.close()
    assert sum(lp.counts.processed for lp in loops) == 40
    assert effects(dbs[0]) == (40, 40)


def test_duplicate_to_two_members_at_once(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    """Every record reaches two loops at once (two groups, one handler name, one database), in two threads.

    This is what a rebalance does to the records in flight, made certain:
    both claim the same keys concurrently, and each event is applied once.
    """
    b = brokers()
    path = str(tmp_path / "biz.db")
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=2)
    for i in range(40):
        publish_pay(pub, spec, pb, f"o-{i}", times=2)
    pub.close()
    loops = [mk.KafkaConsumerLoop(b, g, [mc.Consumer(spec, "recon.pay", record_effect)], sqlite_db(path), namespace=ns,
                          partitions=2) for g in ("recon-a", "recon-b")]
    errors: list[BaseException] = []

    def run(lp: mk.KafkaConsumerLoop) -> None:
        try:
            wait(lambda: lp.counts.processed + lp.counts.deduped >= 80, lp.step, "80 deliveries")
        except BaseException as e:  # reported by the main thread
            errors.append(e)
        finally:
            lp.close()

    threads = [threading.Thread(target=run, args=(lp,)) for lp in loops]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(lp.counts.processed for lp in loops) == 40
    assert sum(lp.counts.deduped for lp in loops) == 120
    assert effects(sqlite_db(path)) == (40, 40)


def test_outbox_relay_and_postgres(spec: Any, pb: Any, ns: str) -> None:
    """The outbox in a PostgreSQL business transaction, its relay, and KafkaConsumerLoop on psycopg."""
    conn = pg_schema(ns)()
    b = brokers()
    mc.migrate(conn)
    outbox.migrate(conn, postgres=True)
    conn.execute("CREATE TABLE effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)")
    conn.commit()
    for i in range(10):  # the business change and its event commit together
        outbox.write(conn, mc.new_envelope(spec, pb.PaySuccess(order_id=f"o-{i}", amount=i)), "format")
    conn.commit()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=2)
    assert outbox.relay_once(conn, pub, "format") == 10
    assert outbox.relay_once(conn, pub, "format") == 0
    pub.close()
    consumers = [mc.Consumer(spec, "recon.pay", lambda c, m, e: record_effect(c, m, e, "format"), paramstyle="format")]
    loop = mk.KafkaConsumerLoop(b, "recon", consumers, conn, namespace=ns, partitions=2)
    try:
        wait(lambda: loop.counts.processed == 10, loop.step, "10 processed")
    finally:
        loop.close()
    assert effects(conn) == (10, 10)
    conn.close()


class CountingConnection(sqlite3.Connection):
    """Counts its commits; the first fail_commits of them fail (nothing committed), as a lost disk's would."""

    commits = 0
    fail_commits = 0

    def commit(self) -> None:
        if self.fail_commits > 0:
            self.fail_commits -= 1
            raise sqlite3.OperationalError("injected: the commit failed")
        self.commits += 1
        super().commit()


def counting_db(path: str) -> CountingConnection:
    conn = sqlite3.connect(path, timeout=30, isolation_level="DEFERRED", check_same_thread=False,
                           factory=CountingConnection)
    assert isinstance(conn, CountingConnection)
    mc.migrate(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, order_id TEXT NOT NULL)")
    conn.commit()
    conn.commits = 0  # migrate's and the table's: the loop's are counted from here
    return conn


def twelve_keys_one_failing_once(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str, batch_size: int) -> int:
    """Twelve orders published before the loop starts, so that its polls return several keys at once;
    o-5's first run writes its effect and then fails (retryable). Returns the commits the loop made."""
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=3)
    for i in range(12):
        publish_pay(pub, spec, pb, f"o-{i}")
    pub.close()
    runs: dict[str, int] = {}

    def handler(conn: Any, m: Any, env: Any) -> None:
        runs[m.order_id] = runs.get(m.order_id, 0) + 1
        record_effect(conn, m, env)
        if m.order_id == "o-5" and runs[m.order_id] == 1:
            raise mc.RetryableError(50301, "system", "ledger answered 503")

    db = counting_db(str(tmp_path / "biz.db"))
    loop = mk.KafkaConsumerLoop(b, "recon", [mc.Consumer(spec, "recon.pay", handler)], db, namespace=ns, partitions=3,
                        batch_size=batch_size)
    try:
        wait(lambda: loop.counts.processed == 12, loop.step, "twelve processed")
    finally:
        loop.close()
    commits = db.commits
    assert loop.counts.retried == 1 and runs["o-5"] == 2
    assert effects(db) == (12, 12)  # o-5's failed run took back its own write (savepoint), nobody else's
    return commits


def test_ready_records_share_a_commit_and_a_failing_one_rolls_back_alone(
    tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str,
) -> None:
    commits = twelve_keys_one_failing_once(tmp_path, spec, pb, ns, 64)
    # 14 with a transaction each (11 and o-5's retry, and the retry chain's
    # two statements of their own: o-5's step, its retry copy's look-up); 12
    # keys on 3 partitions put four on one at least, which one poll returns together.
    assert commits < 14, f"12 records took {commits} commits: no transaction was shared"


def test_batch_size_one_commits_every_record_alone(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    # 11 records and o-5's retry; o-5's retry chain step and its retry copy's look-up
    assert twelve_keys_one_failing_once(tmp_path, spec, pb, ns, 1) == 14


def failed_commit(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str, n: int) -> None:
    """n orders; the loop's first commit fails. Every record is handed back and applied once."""
    b = brokers()
    pub = mk.KafkaPublisher(b, namespace=ns, partitions=3)
    for i in range(n):
        publish_pay(pub, spec, pb, f"o-{i}")
    pub.close()
    db = counting_db(str(tmp_path / "biz.db"))
    db.fail_commits = 1
    consumers = [mc.Consumer(spec, "recon.pay", record_effect)]
    loop = mk.KafkaConsumerLoop(b, "recon", consumers, db, namespace=ns, partitions=3)
    try:
        wait(lambda: loop.counts.processed + loop.counts.deduped == n, loop.step, f"{n} settled")
    finally:
        loop.close()
    assert db.fail_commits == 0 and loop.counts.handed_back >= 1
    assert loop.counts.deduped == 0, "a handed-back record's claim was rolled back with it"
    assert loop.counts.retried == 0, "a database failure is not the message's: no retry counted"
    assert effects(db) == (n, n)


def test_a_failed_commit_hands_every_record_back(tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str) -> None:
    failed_commit(tmp_path, spec, pb, ns, 6)


def test_a_record_whose_commit_failed_is_not_taken_for_a_duplicate(
    tmp_path: pathlib.Path, spec: Any, pb: Any, ns: str,
) -> None:
    """The loop's connection is rolled back after a failed commit. Left open (as before), the record's
    next delivery ran inside it, found its own claim, was acknowledged as a duplicate and rolled the
    effect back: lost."""
    failed_commit(tmp_path, spec, pb, ns, 1)


def test_the_loop_waits_connect_timeout_s_for_the_cluster(spec: Any, tmp_path: pathlib.Path) -> None:
    """A member started while the broker restarts waits connect_timeout_s, as Go's ConnectTimeout; then it says so."""
    import time

    db = sqlite_db(str(tmp_path / "biz.db"))
    start = time.monotonic()
    try:
        mk.KafkaConsumerLoop("127.0.0.1:1", "recon", [mc.Consumer(spec, "recon.pay", record_effect)], db,
                             namespace="nowhere.", connect_timeout_s=1.5, config={"log_level": 0})
    except RuntimeError as e:
        assert "unreachable after 1.5s" in str(e)
    else:
        raise AssertionError("the loop started without a cluster")
    assert time.monotonic() - start >= 1.4
