"""Serializes records with Confluent's ProtobufSerializer and its CEL rule
executor against msgcontract's registry, and prints each record's verdict.

Run by internal/cli/ops TestConfluentRuleExecution with .venv-registry/rules
first on PYTHONPATH:

    confluent_rules.py URL GENDIR IN.json

GENDIR holds the Python classes protoc generated for the contracts. IN.json
is {"groups": [{"subject", "dlq_subject", "dlq_topic", "pb_module",
"message", "records": [{"payloads": [base64 payload bytes, ...]}, ...]}]}:
each payload (the bytes a runtime built) is parsed into the message class
and serialized twice, with the rules `msgcontract registry push` attached
to subject (onFailure ERROR) and with those of dlq_subject (the same rules
with onFailure DLQ). The serializers register nothing and use the latest
version. Prints one JSON list per group, one list per record, one verdict
pair per payload: ["pass" | "fail:RULE", "pass" | "dlq:RULE"], where "fail"
is a rule's refusal and "dlq" a refusal whose record went, with the
__rule.name header naming the rule, to dlq_topic through Confluent's
DlqAction (any other error aborts).
"""
import base64
import importlib
import json
import sys

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor
from confluent_kafka.schema_registry.rules.dlq.dlq_action import DlqAction
from confluent_kafka.schema_registry.serde import DLQ_RULE_NAME_HEADER, RuleConditionError
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError


class CapturingProducer:
    """Stands in for the DLQ producer: keeps what DlqAction produces."""

    def __init__(self):
        self.sent = []

    def produce(self, topic, key=None, value=None, headers=None, on_delivery=None):
        self.sent.append((topic, value, dict(headers or [])))
        if on_delivery is not None:
            on_delivery(None, None)

    def poll(self, timeout=0):
        return 0

    def flush(self, timeout=None):
        return 0


def serializer(url, cls, subject):
    return ProtobufSerializer(cls, SchemaRegistryClient({"url": url}), {
        "auto.register.schemas": False,
        "use.latest.version": True,
        "subject.name.strategy": lambda ctx, record_name: subject,
    })


def rule_names(url, subject, action):
    # Another client: a client caches the latest version whatever format it
    # was asked in, and the serializer needs it serialized.
    rules = SchemaRegistryClient({"url": url}).get_latest_version(subject).schema.rule_set.domain_rules
    if not rules:
        raise SystemExit("the latest version of %s has no rules" % subject)
    for r in rules:
        if r.on_failure != action:
            raise SystemExit("%s: rule %s fails with %s, not %s" % (subject, r.name, r.on_failure, action))
    return {r.name: RuleConditionError.error_message(r) for r in rules}


def refused_by(e, messages):
    """The rule whose condition refused the record, else re-raises e."""
    cause = e
    while cause is not None and not isinstance(cause, RuleConditionError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        raise e
    for name, msg in messages.items():
        if str(cause) == msg:
            return name
    raise SystemExit("refused by an unexpected rule: %s" % cause)


def main():
    url, gendir, src = sys.argv[1:4]
    CelExecutor.register()
    dlq = CapturingProducer()
    DlqAction.register({"producer": dlq})
    sys.path.insert(0, gendir)
    with open(src) as f:
        spec = json.load(f)
    out = []
    for g in spec["groups"]:
        cls = getattr(importlib.import_module(g["pb_module"]), g["message"])
        ser = serializer(url, cls, g["subject"])
        dser = serializer(url, cls, g["dlq_subject"])
        ctx = SerializationContext(g["subject"].removesuffix("-value"), MessageField.VALUE)
        dctx = SerializationContext(g["dlq_subject"].removesuffix("-value"), MessageField.VALUE)
        errors = rule_names(url, g["subject"], "ERROR")
        dlqs = rule_names(url, g["dlq_subject"], "DLQ")
        verdicts = []
        for r in g["records"]:
            pairs = []
            for p in r["payloads"]:
                msg = cls.FromString(base64.b64decode(p))
                try:
                    data = ser(msg, ctx)
                    if not data or data[0] != 0:
                        raise SystemExit("not Confluent's wire format: %r" % data[:8])
                    verdict = "pass"
                except (RuleConditionError, SerializationError) as e:
                    verdict = "fail:" + refused_by(e, errors)
                dlq.sent.clear()
                try:
                    dser(msg, dctx)
                    routed = "pass"
                except SerializationError as e:
                    name = refused_by(e, dlqs)
                    if str(e) != "Rule failed: " + name:
                        raise SystemExit("DLQ action's error %r does not name rule %s" % (str(e), name))
                    if len(dlq.sent) != 1:
                        raise SystemExit("%d records went to the DLQ, want 1" % len(dlq.sent))
                    topic, value, headers = dlq.sent[0]
                    if topic != g["dlq_topic"] or headers.get(DLQ_RULE_NAME_HEADER) != name.encode() or not value:
                        raise SystemExit("DLQ record to %s with headers %r" % (topic, headers))
                    routed = "dlq:" + name
                if routed == "pass" and dlq.sent:
                    raise SystemExit("a record that passed went to the DLQ")
                pairs.append([verdict, routed])
            verdicts.append(pairs)
        out.append(verdicts)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
