"""Drives msgcontract's registry with Confluent's own Python client.

Run by registry/api TestConfluentPythonClient with the registry URL as the
only argument; prints "ok" when every step behaved as against Confluent's
registry. Needs .venv-registry (scripts/setup-registry-client.sh).
"""
import importlib
import os
import subprocess
import sys
import tempfile

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

MONEY = """syntax = "proto3";
package shop.common.v1;

message Money {
  int64 cents = 1;
  string currency = 2;
}
"""

ORDER = """syntax = "proto3";
package shop.order.v1;

import "google/protobuf/timestamp.proto";
import "shop/common/v1/money.proto";

message OrderPlaced {
  string order_id = 1;
  shop.common.v1.Money total = 2;
  google.protobuf.Timestamp placed_at = 3;
}
"""

PLAIN = """syntax = "proto3";
package plain.v1;

message Ping {
  string id = 1;
}
"""


def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)


def generate(workdir):
    """Generates Python classes for MONEY and ORDER with protoc."""
    for path, text in (("shop/common/v1/money.proto", MONEY), ("shop/order/v1/order.proto", ORDER)):
        full = os.path.join(workdir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", workdir, "--python_out", workdir,
                    "shop/common/v1/money.proto", "shop/order/v1/order.proto"], check=True)
    sys.path.insert(0, workdir)
    return importlib.import_module("shop.order.v1.order_pb2")


def main():
    url = sys.argv[1]
    client = SchemaRegistryClient({"url": url})

    # Register, fetch and check a text schema: it comes back unchanged.
    schema_id = client.register_schema("plain-value", Schema(PLAIN, "PROTOBUF"))
    fetched = client.get_schema(schema_id)
    check(fetched.schema_str == PLAIN, "get_schema returns the registered text")
    check(fetched.schema_type == "PROTOBUF", "schemaType PROTOBUF")
    latest = client.get_latest_version("plain-value")
    check(latest.schema_id == schema_id and latest.version == 1, "latest version")
    check(latest.schema.schema_str == PLAIN, "latest version text")
    again = client.register_schema("plain-value", Schema(PLAIN, "PROTOBUF"))
    check(again == schema_id, "re-registering returns the existing id")
    added = PLAIN.replace("string id = 1;", "string id = 1;\n  int64 at = 2;")
    check(client.test_compatibility("plain-value", Schema(added, "PROTOBUF")) is True, "adding a field is compatible")
    renamed = PLAIN.replace("string id = 1;", "string key = 1;")
    check(client.test_compatibility("plain-value", Schema(renamed, "PROTOBUF")) is False, "renaming a field is not")
    try:
        client.register_schema("plain-value", Schema(renamed, "PROTOBUF"))
        check(False, "registering an incompatible schema must fail")
    except SchemaRegistryError as e:
        check(e.http_status_code == 409, "incompatible: HTTP 409, got %s" % e.http_status_code)
        check(e.error_code == 40901, "incompatible: error_code 40901, got %s" % e.error_code)
    check("plain-value" in client.get_subjects(), "subjects")
    check(client.get_versions("plain-value") == [1], "versions")
    check(client.get_version("plain-value", 1).schema.schema_str == PLAIN, "get_version")

    # Levels: global default BACKWARD, a subject override, NONE lets the
    # rename through as version 2, deletes answer with version numbers.
    check(client.get_compatibility() == "BACKWARD", "default level")
    check(client.set_compatibility("plain-value", "NONE")["compatibility"] == "NONE", "set level")
    check(client.get_compatibility("plain-value") == "NONE", "subject level")
    client.register_schema("plain-value", Schema(renamed, "PROTOBUF"))
    check(client.get_versions("plain-value") == [1, 2], "versions after NONE")
    check(client.delete_version("plain-value", 2) == 2, "delete_version")
    check(client.delete_subject("plain-value") == [1], "delete_subject")
    try:
        client.get_latest_version("plain-value")
        check(False, "a deleted subject must be gone")
    except SchemaRegistryError as e:
        check(e.http_status_code == 404 and e.error_code == 40401, "deleted subject: 404/40401, got %s/%s" % (e.http_status_code, e.error_code))

    # The serializer registers the imported file as a referenced subject.
    with tempfile.TemporaryDirectory() as workdir:
        order_pb2 = generate(workdir)
        ser = ProtobufSerializer(order_pb2.OrderPlaced, client,
                                 {"auto.register.schemas": True, "use.deprecated.format": False})
        msg = order_pb2.OrderPlaced(order_id="o-1")
        msg.total.cents = 1250
        msg.total.currency = "EUR"
        msg.placed_at.seconds = 1767225600
        ctx = SerializationContext("orders", MessageField.VALUE)
        data = ser(msg, ctx)
        check(data[0] == 0, "magic byte")
        sid = int.from_bytes(data[1:5], "big")
        subjects = client.get_subjects()
        check("shop/common/v1/money.proto" in subjects, "dependency registered as a subject: %s" % subjects)
        check("orders-value" in subjects, "value subject registered: %s" % subjects)
        registered = client.get_latest_version("orders-value")
        check(registered.schema_id == sid, "the id in the message is the registered one")
        refs = registered.schema.references
        names = sorted(r.name for r in refs)
        check(names == ["google/protobuf/timestamp.proto", "shop/common/v1/money.proto"], "references recorded: %s" % names)
        check("message OrderPlaced" in registered.schema.schema_str, "descriptor stored as .proto text")
        # A second serializer (a restarted producer) finds the same id.
        ser2 = ProtobufSerializer(order_pb2.OrderPlaced, client,
                                  {"auto.register.schemas": True, "use.deprecated.format": False})
        check(int.from_bytes(ser2(msg, ctx)[1:5], "big") == sid, "re-registration keeps the id")
        de = ProtobufDeserializer(order_pb2.OrderPlaced, {"use.deprecated.format": False})
        check(de(data, ctx) == msg, "round trip")

    # A context subject has ids of its own; normalize=true makes another
    # spelling of a schema the same one.
    spelled = PLAIN.replace("string id = 1;", "string   id  =  1; // the id")
    in_ctx = client.register_schema(":.py:plain-value", Schema(PLAIN, "PROTOBUF"), normalize_schemas=True)
    check(in_ctx != schema_id, "the context gives the schema an id of its own")
    again = client.register_schema(":.py:plain-value", Schema(spelled, "PROTOBUF"), normalize_schemas=True)
    check(again == in_ctx, "another spelling, normalized, keeps the id")
    found = client.lookup_schema(":.py:plain-value", Schema(spelled, "PROTOBUF"), normalize_schemas=True)
    check(found.schema_id == in_ctx and found.version == 1, "normalized lookup in the context")
    check(":.py:plain-value" in client.get_subjects(), "context subject listed")
    print("ok")


if __name__ == "__main__":
    main()
