"""The Python side of integration/kafkainterop's tests, run by the Go tests with the project's .venv.

  pyinterop.py publish REGISTRY BROKERS NS GEN N   KafkaPublisher (confluent-kafka's ProtobufSerializer):
                                                  N PaySuccess events, each published twice
  pyinterop.py read BROKERS NS GEN N               confluent-kafka's ProtobufDeserializer reads N records
  pyinterop.py poison BROKERS NS GEN DB           KafkaConsumerLoop dead-letters a garbled and a refused event
  pyinterop.py member REGISTRY BROKERS NS GEN DSN STOPFILE
                                                  a KafkaConsumerLoop member of group "recon" on PostgreSQL
  pyinterop.py member-async REGISTRY BROKERS NS GEN DSN STOPFILE
                                                  the same as an AsyncConsumer on aio.kafka and asyncpg
  pyinterop.py member-dies BROKERS NS GEN DSN WHEN MIN_ATTEMPT
                                                  a KafkaConsumerLoop member of group "recon" on PostgreSQL that fails
                                                  every PaySuccess and SIGKILLs itself at a retry publish
                                                  (tests_kafka/chain_worker.py's die_at_retry)
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time
import urllib.request
import uuid
from typing import Any

import msgcontract_runtime as mc
from msgcontract_runtime import kafka as mk
from msgcontract_runtime import wire

from conftest import generate_payment, pay_success_spec


def payment(gen: str) -> Any:
    generate_payment(pathlib.Path(gen))
    sys.path.insert(0, gen)
    from shop.payment.v1 import payment_pb2  # type: ignore[import-not-found]

    return payment_pb2


def publish(registry: str, brokers: str, ns: str, gen: str, n: int) -> None:
    pb = payment(gen)
    spec = pay_success_spec(pb)
    pub = mk.KafkaPublisher(brokers, namespace=ns, registry_url=registry, specs=[spec], partitions=2)
    with urllib.request.urlopen(f"{registry}/subjects/order-event-value/versions/latest") as r:
        schema_id = json.loads(r.read())["id"]
    for i in range(n):
        env = mc.new_envelope(spec, pb.PaySuccess(order_id=f"py-{i}", amount=100 + i, currency="EUR"))
        value, headers = pub.record(spec.topic, env)
        # confluent-kafka's serializer wrote exactly the frame msgcontract's wire module writes
        want = wire.frame(schema_id, wire.message_index(pb.PaySuccess.DESCRIPTOR), value[6:])
        assert value == want and value[:6] == bytes([0, 0, 0, 0, schema_id, 0]), (value[:8].hex(), want[:8].hex())
        assert pb.PaySuccess.FromString(value[6:]).order_id == f"py-{i}"
        assert dict(headers)[wire.HEADER_ENVELOPE]
        pub.publish(spec.topic, env)
        pub.publish(spec.topic, env)
    pub.close()
    print(f"published {n} twice, schema id {schema_id}")


def read(brokers: str, ns: str, gen: str, n: int) -> None:
    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    pb = payment(gen)
    des = ProtobufDeserializer(pb.PaySuccess, {"use.deprecated.format": False})
    c = Consumer({"bootstrap.servers": brokers, "group.id": "reader-" + uuid.uuid4().hex,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([ns + "order-event"])
    got = 0
    end = time.monotonic() + 60
    while got < n and time.monotonic() < end:
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        msg = des(m.value(), SerializationContext(m.topic(), MessageField.VALUE))
        env = wire.join(dict(m.headers())[wire.HEADER_ENVELOPE], m.value()[6:])
        schema_id = int.from_bytes(m.value()[1:5], "big")
        print(f"{msg.order_id} {msg.amount} {env.biz_key} {env.schema_subject} {schema_id} {m.key().decode()}")
        got += 1
    c.close()


def member(registry: str, brokers: str, ns: str, gen: str, dsn: str, stopfile: str) -> None:
    import psycopg

    pb = payment(gen)
    spec = pay_success_spec(pb)
    conn = psycopg.connect(dsn)

    def handler(c: Any, m: Any, env: Any) -> None:
        c.cursor().execute("INSERT INTO effects (biz_key, who) VALUES (%s, 'py')", (env.biz_key,))

    loop = mk.KafkaConsumerLoop(brokers, "recon", [mc.Consumer(spec, "recon.pay", handler, paramstyle="format")], conn,
                        namespace=ns, registry_url=registry, partitions=6, session_timeout_ms=6000)
    last: list[Any] = []
    try:
        while not os.path.exists(stopfile):
            loop.step(0.1)
            if loop.assigned != last:
                last = loop.assigned
                main = [p for t, p in last if t == ns + "order-event"]
                print("assigned " + ",".join(map(str, main)), flush=True)
    finally:
        loop.close()
    print(f"member: processed={loop.counts.processed} deduped={loop.counts.deduped}", flush=True)


def member_async(registry: str, brokers: str, ns: str, gen: str, dsn: str, stopfile: str) -> None:
    import asyncio
    import urllib.parse

    from msgcontract_runtime.aio import AsyncConsumer
    from msgcontract_runtime.aio.kafka import KafkaSubscription
    from msgcontract_runtime.aio.postgres import PostgresDatabase

    pb = payment(gen)
    spec = pay_success_spec(pb)
    # asyncpg takes unknown DSN parameters as server settings, and not libpq's options=-c...
    u = urllib.parse.urlsplit(dsn)
    q = dict(urllib.parse.parse_qsl(u.query))
    for opt in q.pop("options", "").split():
        k, _, v = opt.removeprefix("-c").partition("=")
        q[k] = v
    dsn = urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q)))

    async def handler(c: Any, m: Any, env: Any) -> None:
        await c.execute("INSERT INTO effects (biz_key, who) VALUES ($1, 'py')", env.biz_key)

    async def main() -> None:
        db = await PostgresDatabase.open(dsn, size=8)
        sub = await KafkaSubscription.open(brokers, "recon", [spec], namespace=ns, registry_url=registry, partitions=6,
                                           session_timeout_ms=6000)
        seen: dict[str, int] = {}
        c = AsyncConsumer(spec, "recon.pay", handler, concurrency=8,
                          observer=lambda o: seen.__setitem__(str(o.label), seen.get(str(o.label), 0) + 1))
        stop = asyncio.Event()
        task = asyncio.create_task(c.run(sub, db, stop))
        last: list[Any] = []
        try:
            while not os.path.exists(stopfile) and not task.done():
                await asyncio.sleep(0.1)
                if sub.assigned != last:
                    last = sub.assigned
                    main = [p for t, p in last if t == ns + "order-event"]
                    print("assigned " + ",".join(map(str, main)), flush=True)
            stop.set()
            await task
        finally:
            await sub.close()
            await db.close()
        print(f"member: processed={seen.get('handled', 0)} deduped={seen.get('deduplicated', 0)}", flush=True)

    asyncio.run(main())


def member_dies(brokers: str, ns: str, gen: str, dsn: str, when: str, min_attempt: str) -> None:
    import psycopg

    from chain_worker import die_at_retry, fail

    pb = payment(gen)
    conn = psycopg.connect(dsn)
    mc.migrate(conn)
    loop = mk.KafkaConsumerLoop(brokers, "recon", [mc.Consumer(pay_success_spec(pb), "recon.pay", fail, paramstyle="format")],
                        conn, namespace=ns, partitions=2, session_timeout_ms=6000)
    die_at_retry(loop, "order-event", when, int(min_attempt))
    end = time.monotonic() + 120
    loop.run(lambda: time.monotonic() > end)
    sys.exit("member-dies: no retry to die at within 120s")


def poison(brokers: str, ns: str, gen: str, db: str) -> None:
    """A PaySuccess whose payload does not decode and one the handler refuses, dead-lettered by KafkaConsumerLoop."""
    import sqlite3

    pb = payment(gen)
    spec = pay_success_spec(pb)
    pub = mk.KafkaPublisher(brokers, namespace=ns, partitions=1)
    bad = mc.new_envelope(spec, pb.PaySuccess(order_id="garbled"))
    bad.payload = b"\xff\xff"
    pub.publish(spec.topic, bad)
    pub.publish(spec.topic, mc.new_envelope(spec, pb.PaySuccess(order_id="refused")))
    pub.close()
    conn = sqlite3.connect(db)
    mc.migrate(conn)

    def handler(c: Any, m: Any, env: Any) -> None:
        raise mc.NonRetryableError(40001, "business", "order unknown")

    loop = mk.KafkaConsumerLoop(brokers, "recon", [mc.Consumer(spec, "recon.pay", handler)], conn, namespace=ns, partitions=1)
    loop.run(lambda: loop.counts.dead_lettered >= 2)
    print(f"dead-lettered {loop.counts.dead_lettered}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "publish":
        publish(args[0], args[1], args[2], args[3], int(args[4]))
    elif cmd == "read":
        read(args[0], args[1], args[2], int(args[3]))
    elif cmd == "poison":
        poison(*args)
    elif cmd == "member":
        member(*args)
    elif cmd == "member-async":
        member_async(*args)
    elif cmd == "member-dies":
        member_dies(*args)
    else:
        sys.exit(f"unknown command {cmd}")
