"""Serializes records with Confluent's ProtobufSerializer and its CEL rule
executor against msgcontract's registry, and prints each record's verdict.

Run by internal/cli/ops TestConfluentRuleExecution with .venv-registry/rules
first on PYTHONPATH:

    confluent_rules.py URL SUBJECT GENDIR MODULE MESSAGE VECTORS.json

GENDIR holds the Python classes protoc generated for the contract, MODULE
is the one with MESSAGE, VECTORS.json a list of payloads (proto field
names). The serializer registers nothing and uses the subject's latest
version, so the rules `msgcontract registry push` attached run on every
record. Prints one JSON list: "pass" when a record serialized, "fail" when a
rule refused it (any other error aborts).
"""
import importlib
import json
import sys

from google.protobuf import json_format

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor
from confluent_kafka.schema_registry.serde import RuleConditionError
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError


def main():
    url, subject, gendir, module, message, vectors = sys.argv[1:7]
    CelExecutor.register()
    sys.path.insert(0, gendir)
    cls = getattr(importlib.import_module(module), message)
    client = SchemaRegistryClient({"url": url})
    ser = ProtobufSerializer(cls, client, {
        "auto.register.schemas": False,
        "use.latest.version": True,
        "subject.name.strategy": lambda ctx, record_name: subject,
    })
    ctx = SerializationContext(subject.removesuffix("-value"), MessageField.VALUE)
    # Another client: a client caches the latest version whatever format it
    # was asked in, and the serializer needs it serialized.
    latest = SchemaRegistryClient({"url": url}).get_latest_version(subject)
    rule_messages = {RuleConditionError.error_message(r) for r in latest.schema.rule_set.domain_rules}
    if not rule_messages:
        raise SystemExit("the latest version of %s has no rules" % subject)
    verdicts = []
    with open(vectors) as f:
        payloads = json.load(f)
    for p in payloads:
        msg = json_format.ParseDict(p, cls(), ignore_unknown_fields=False)
        try:
            data = ser(msg, ctx)
        except (RuleConditionError, SerializationError) as e:
            # Only a rule's refusal is a "fail"; anything else aborts.
            cause = e
            while cause is not None and not isinstance(cause, RuleConditionError):
                cause = cause.__cause__ or cause.__context__
            if cause is None:
                raise
            if str(cause) not in rule_messages:
                raise SystemExit("refused by an unexpected rule: %s" % cause)
            verdicts.append("fail")
            continue
        if not data or data[0] != 0:
            raise SystemExit("not Confluent's wire format: %r" % data[:8])
        verdicts.append("pass")
    print(json.dumps(verdicts))


if __name__ == "__main__":
    main()
