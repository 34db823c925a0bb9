"""Confluent's Python Schema Registry client against msgcontract's registry
with access rules: HTTP Basic, a JWT as a static bearer token, a client
certificate, and refusals with Confluent's status and error codes.

Run by integration/registrysecurity TestSecurityConfluentPythonClient,
which passes the registry's URL, the CA file and every credential as JSON
on standard input. Prints one line per case: "case NAME ok" or
"case NAME FAILED: why"; the test makes each line a subtest.
"""
import json
import sys
import traceback

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

PAY_V2 = 'syntax = "proto3";\npackage pay.v1;\nmessage Paid {\n  string order_id = 1;\n  int64 amount = 2;\n}\n'
PAY_V3 = 'syntax = "proto3";\npackage pay.v1;\nmessage Paid {\n  string order_id = 1;\n  int64 amount = 2;\n  string currency = 3;\n}\n'


def client(cfg, **conf):
    conf = {"url": cfg["url"], "ssl.ca.location": cfg["ca"], **conf}
    return SchemaRegistryClient(conf)


def basic(cfg, who):
    u = cfg["basic"][who]
    return client(cfg, **{"basic.auth.user.info": u["user"] + ":" + u["password"]})


def bearer(cfg, token):
    # Confluent's client insists on a logical cluster; the registry
    # ignores the header it becomes.
    return client(cfg, **{
        "bearer.auth.credentials.source": "STATIC_TOKEN",
        "bearer.auth.token": token,
        "bearer.auth.logical.cluster": "lsrc-test",
    })


def cert(cfg, who):
    c = cfg["certs"][who]
    return client(cfg, **{"ssl.certificate.location": c["cert"], "ssl.key.location": c["key"]})


def refused(fn, status, code):
    try:
        fn()
    except SchemaRegistryError as e:
        if e.http_status_code != status or e.error_code != code:
            raise AssertionError(f"refused with {e.http_status_code}/{e.error_code} ({e.error_message}); want {status}/{code}")
        return
    raise AssertionError(f"not refused; want {status}/{code}")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def latest(c):
    v = c.get_latest_version("pay-value")
    expect(v.version >= 1, f"latest version {v.version}")


def only_pay(c):
    got = c.get_subjects()
    expect(got == ["pay-value"], f"subjects {got}, want only pay-value")


def register(c, text):
    sid = c.register_schema("pay-value", Schema(text, "PROTOBUF"))
    expect(isinstance(sid, int) and sid > 0, f"register returned {sid!r}")


def main():
    cfg = json.load(sys.stdin)
    cases = [
        ("basic writer registers", lambda: register(basic(cfg, "writer"), PAY_V2)),
        ("basic reader reads the latest version", lambda: latest(basic(cfg, "reader"))),
        ("basic reader may not register", lambda: refused(lambda: register(basic(cfg, "reader"), PAY_V3), 403, 40301)),
        ("basic wrong password is 401", lambda: refused(
            lambda: client(cfg, **{"basic.auth.user.info": cfg["basic"]["writer"]["user"] + ":wrong"}).get_subjects(), 401, 40101)),
        ("basic with a token as the password", lambda: register(
            client(cfg, **{"basic.auth.user.info": "any:" + cfg["tokens"]["writer"]}), PAY_V2)),
        ("jwt writer registers", lambda: register(bearer(cfg, cfg["jwt"]["writer"]), PAY_V3)),
        ("jwt reader may not register", lambda: refused(lambda: register(bearer(cfg, cfg["jwt"]["reader"]), PAY_V3), 403, 40301)),
        ("expired jwt is 401", lambda: refused(lambda: bearer(cfg, cfg["jwt"]["expired"]).get_subjects(), 401, 40101)),
        ("client certificate writer registers", lambda: register(cert(cfg, "writer"), PAY_V3)),
        ("client certificate reader may not delete", lambda: refused(
            lambda: cert(cfg, "reader").delete_subject("pay-value"), 403, 40301)),
        ("anonymous is 401", lambda: refused(lambda: client(cfg).get_subjects(), 401, 40101)),
        ("pay admin lists only its subjects", lambda: only_pay(basic(cfg, "pay-admin"))),
    ]
    for name, fn in cases:
        try:
            fn()
            print(f"case {name} ok", flush=True)
        except Exception as e:  # every failure is a case's verdict
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            print(f"case {name} FAILED: {detail}", flush=True)


if __name__ == "__main__":
    main()
