#!/usr/bin/env python3
# Writes the conformance vector files. Expected values are worked out here
# from DESIGN.md's rules (hand-computed constants; the backoff helper below
# is the DESIGN formula in float64), never from an implementation's output.
import hashlib, json, math, os

OUT = os.path.dirname(os.path.abspath(__file__))

def write(name, files, cases):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        f.write('{\n "proto_root": "proto",\n "files": ' + json.dumps(files) + ',\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n ]\n}\n")

def bk(name, msg, inp, key=None, err=None):
    return {"name": name, "kind": "biz_key", "message": msg, "input": inp,
            "expect": {"biz_key": key} if err is None else {"error": err}}

# ---------------------------------------------------------------- keys
R, P, I, F, S, N, B = ("conf.keys.v1." + m for m in ("Raw", "Pair", "Ints", "Flags", "Shipment", "Note", "Braces"))
c = []
c += [
    bk("unreserved-untouched", R, {"s": "AZaz09-._~"}, "AZaz09-._~"),
    bk("space", R, {"s": "a b"}, "a%20b"),
    bk("percent", R, {"s": "100%"}, "100%25"),
    bk("percent-looking-escape", R, {"s": "%41"}, "%2541"),
    bk("colon", R, {"s": "a:b"}, "a%3Ab"),
    bk("reserved-gen-delims-and-sub-delims", R, {"s": "!#$&'()*+,/;=?@[]"},
       "%21%23%24%26%27%28%29%2A%2B%2C%2F%3B%3D%3F%40%5B%5D"),
    bk("reserved-other-ascii", R, {"s": "\"<>\\^`{|}"}, "%22%3C%3E%5C%5E%60%7B%7C%7D"),
    bk("control-chars", R, {"s": "\t\n\u007f"}, "%09%0A%7F"),
    bk("two-byte-utf8", R, {"s": "café"}, "caf%C3%A9"),
    bk("upper-case-hex", R, {"s": "ÿ"}, "%C3%BF"),
    bk("three-byte-utf8", R, {"s": "中文"}, "%E4%B8%AD%E6%96%87"),
    bk("emoji-four-bytes", R, {"s": "😀"}, "%F0%9F%98%80"),
    bk("mixed-script", R, {"s": "Ünï-😀_x"}, "%C3%9Cn%C3%AF-%F0%9F%98%80_x"),
    bk("empty-string", R, {"s": ""}, err="EMPTY_FIELD"),
    bk("absent-string", R, {}, err="EMPTY_FIELD"),
    bk("len-511", R, {"s": "a" * 511}, "a" * 511),
    bk("len-512", R, {"s": "a" * 512}, "a" * 512),
    bk("len-513", R, {"s": "a" * 513}, err="KEY_TOO_LONG"),
    # 170 spaces encode to 510 bytes; 171 to 513, though the raw value is 171 bytes.
    bk("escaped-510", R, {"s": " " * 170}, "%20" * 170),
    bk("escaped-512", R, {"s": " " * 170 + "ab"}, "%20" * 170 + "ab"),
    bk("escaped-crosses-limit", R, {"s": " " * 171}, err="KEY_TOO_LONG"),
    # 42 emoji encode to 504 bytes; 8 more make 512. 43 emoji are 516.
    bk("emoji-512", R, {"s": "😀" * 42 + "12345678"}, "%F0%9F%98%80" * 42 + "12345678"),
    bk("emoji-crosses-limit", R, {"s": "😀" * 43}, err="KEY_TOO_LONG"),
    bk("colon-in-first", P, {"a": "a:b", "b": "c"}, "pair:a%3Ab:c"),
    bk("colon-in-second", P, {"a": "a", "b": "b:c"}, "pair:a:b%3Ac"),
    bk("pair-second-empty", P, {"a": "a"}, err="EMPTY_FIELD"),
    # Literal text counts toward the limit: "pair:" + 253 + ":" + 253 = 512.
    bk("pair-512-with-literals", P, {"a": "x" * 253, "b": "y" * 253}, "pair:" + "x" * 253 + ":" + "y" * 253),
    bk("pair-513-with-literals", P, {"a": "x" * 253, "b": "y" * 254}, err="KEY_TOO_LONG"),
    bk("ints-zero", I, {}, "0|0|0|0|0|0|0|0|0|0"),
    bk("ints-max", I, {"i32": 2147483647, "i64": "9223372036854775807", "u32": 4294967295,
                       "u64": "18446744073709551615", "s32": 2147483647, "s64": "9223372036854775807",
                       "f32": 4294967295, "f64": "18446744073709551615", "sf32": 2147483647,
                       "sf64": "9223372036854775807"},
       "2147483647|9223372036854775807|4294967295|18446744073709551615|2147483647|"
       "9223372036854775807|4294967295|18446744073709551615|2147483647|9223372036854775807"),
    bk("ints-min", I, {"i32": -2147483648, "i64": "-9223372036854775808", "s32": -2147483648,
                       "s64": "-9223372036854775808", "sf32": -2147483648, "sf64": "-9223372036854775808"},
       "-2147483648|-9223372036854775808|0|0|-2147483648|-9223372036854775808|0|0|-2147483648|-9223372036854775808"),
    bk("ints-minus-one", I, {"i32": -1, "i64": "-1", "s32": -1, "s64": "-1", "sf32": -1, "sf64": "-1"},
       "-1|-1|0|0|-1|-1|0|0|-1|-1"),
    bk("unsigned-high-bit", I, {"u32": 2147483648, "u64": "9223372036854775808",
                                "f32": 2147483648, "f64": "9223372036854775808"},
       "0|0|2147483648|9223372036854775808|0|0|2147483648|9223372036854775808|0|0"),
    bk("ints-as-json-numbers", I, {"i64": 42, "u64": 7}, "0|42|0|7|0|0|0|0|0|0"),
    bk("bool-enum-zero", F, {}, "on=false:color=COLOR_UNSPECIFIED"),
    bk("bool-true-enum-name", F, {"on": True, "color": "GREEN"}, "on=true:color=GREEN"),
    bk("enum-by-number", F, {"color": 1}, "on=false:color=RED"),
    bk("enum-unknown-number", F, {"color": 7}, "on=false:color=7"),
    bk("nested-full", S, {"order": {"id": "o-1", "customer": {"name": "Ann Lee", "tier": "0"}}},
       "ship:o-1:Ann%20Lee:0"),
    bk("nested-negative-optional", S, {"order": {"id": "o/1", "customer": {"name": "Bo", "tier": "-3"}}},
       "ship:o%2F1:Bo:-3"),
    bk("nested-order-unset", S, {}, err="EMPTY_FIELD"),
    bk("nested-customer-unset", S, {"order": {"id": "o-1"}}, err="EMPTY_FIELD"),
    bk("nested-customer-empty-message", S, {"order": {"id": "o-1", "customer": {}}}, err="EMPTY_FIELD"),
    bk("nested-optional-absent", S, {"order": {"id": "o-1", "customer": {"name": "Bo"}}}, err="EMPTY_FIELD"),
    bk("nested-empty-id", S, {"order": {"customer": {"name": "Bo", "tier": 1}}}, err="EMPTY_FIELD"),
    bk("optional-present-zero", N, {"text": "t", "seq": "0", "flag": False}, "note:t:0:false"),
    bk("optional-present-empty-string", N, {"text": "", "seq": "1", "flag": True}, err="EMPTY_FIELD"),
    bk("optional-int-absent", N, {"text": "t", "flag": True}, err="EMPTY_FIELD"),
    bk("optional-bool-absent", N, {"text": "t", "seq": "5"}, err="EMPTY_FIELD"),
    bk("braces-and-keyword-fields", B, {"class": "c", "from": 0}, "{lit}:c:0:{"),
    bk("keyword-fields-escaped", B, {"class": "a b", "from": -7}, "{lit}:a%20b:-7:{"),
    bk("keyword-field-empty", B, {"from": 3}, err="EMPTY_FIELD"),
]
write("keys.json", ["conf/keys/v1/keys.proto"], c)
nkeys = len(c)

# ---------------------------------------------------------------- backoff
def d(base, mult, cap, n):
    v = base
    for _ in range(2, n + 1):
        p = float(v) * mult
        v = cap if p >= float(cap) else math.floor(p)
    return v

def delay(pol, n, u):
    base, mult, jit, cap, _ = pol
    return d(base, mult, cap, n) + math.floor(float(jit) * u)

def bo(name, msg, pol, n, u, dead=None):
    c = {"name": name, "kind": "backoff", "message": "conf.policy.v1." + msg, "retry": n}
    if u:
        c["u"] = u
    if n > pol[4]:
        c["expect"] = {"dead_letter": True}
    elif dead is False:
        c["expect"] = {"dead_letter": False, "delay_ms": delay(pol, n, u)}
    else:
        c["expect"] = {"delay_ms": delay(pol, n, u)}
    return c

FD = (500, 3.0, 250, 20000, 5)
OAH = (200, 1.5, 100, 5000, 8)
TP = (1000, 1.1, 0, 3600000, 30)
TPT = (100, 2.3, 10, 60000, 10)
NR = (1000, 2.0, 1000, 60000, 0)
AC = (3000, 2.0, 1000, 3000, 4)
HG = (1000, 1e301, 0, 86400000, 30)
DF = (1000, 2.0, 1000, 60000, 6)
c = [
    bo("file-default-first", "FileDefault", FD, 1, 0.0),
    bo("file-default-half-jitter", "FileDefault", FD, 2, 0.5),
    bo("file-default-jitter-near-one", "FileDefault", FD, 4, 0.9999),
    bo("file-default-capped", "FileDefault", FD, 5, 0.0),
    bo("file-default-capped-jitter", "FileDefault", FD, 5, 0.999999, dead=False),
    bo("file-default-past-max", "FileDefault", FD, 6, 0.0),
    bo("one-and-a-half-floor", "OneAndAHalf", OAH, 5, 0.0),
    bo("one-and-a-half-last", "OneAndAHalf", OAH, 8, 0.5, dead=False),
    bo("one-and-a-half-jitter-rounds-down", "OneAndAHalf", OAH, 8, 0.9999),
    bo("one-and-a-half-past-max", "OneAndAHalf", OAH, 9, 0.0),
    bo("ten-percent-8", "TenPercent", TP, 8, 0.3),
    bo("ten-percent-9-iterated-not-pow", "TenPercent", TP, 9, 0.0),
    bo("ten-percent-30", "TenPercent", TP, 30, 0.7, dead=False),
    bo("ten-percent-31", "TenPercent", TP, 31, 0.0),
    bo("two-point-three-float64", "TwoPointThree", TPT, 2, 0.0),
    bo("two-point-three-5", "TwoPointThree", TPT, 5, 0.95),
    bo("two-point-three-capped", "TwoPointThree", TPT, 10, 0.0),
    bo("no-retry-dead-at-first", "NoRetry", NR, 1, 0.0),
    bo("at-cap-first", "AtCap", AC, 1, 0.0),
    bo("at-cap-stays", "AtCap", AC, 4, 0.9999, dead=False),
    bo("at-cap-past-max", "AtCap", AC, 5, 0.5),
    bo("huge-first-uncapped", "Huge", HG, 1, 0.0),
    bo("huge-second-capped", "Huge", HG, 2, 0.0),
    bo("huge-product-infinite", "Huge", HG, 3, 0.0),
    bo("huge-last", "Huge", HG, 30, 0.0),
    bo("empty-retry-is-builtin-not-file", "Defaults", DF, 6, 0.5),
    bo("empty-retry-past-builtin-max", "Defaults", DF, 7, 0.0),
]
# Hand checks of the helper: DESIGN's worked numbers.
assert delay(DF, 3, 0.5) == 4500 and d(*TPT[:2], TPT[3], 2) == 229 and d(500, 3.0, 20000, 4) == 13500
assert delay(OAH, 5, 0.0) == 1012 and delay(OAH, 8, 0.9999) == 3514
write("policy.json", ["conf/policy/v1/policy.proto"], c)
npol = len(c)

# ---------------------------------------------------------------- classify
def cl(name, msg, code, retryable, rng):
    c = {"name": name, "kind": "classify", "message": "conf.classify.v1." + msg}
    if code is not None:
        c["code"] = code
    c["expect"] = {"retryable": retryable, "range": rng}
    return c

c = [
    cl("int32-min", "Strict", -2147483648, True, "negative"),
    cl("negative-range-top", "Strict", -1000, True, "negative"),
    cl("just-above-negative", "Strict", -999, False, ""),
    cl("zero-unclassified", "Strict", 0, False, ""),
    cl("below-business", "Strict", 39999, False, ""),
    cl("business-low", "Strict", 40000, False, "business"),
    cl("business-high", "Strict", 49999, False, "business"),
    cl("single-code-range", "Strict", 50000, True, "exact"),
    cl("system-low", "Strict", 50001, True, "system"),
    cl("system-high", "Strict", 59999, True, "system"),
    cl("above-system", "Strict", 60000, False, ""),
    cl("below-top", "Strict", 2147482999, False, ""),
    cl("top-low", "Strict", 2147483000, False, "top"),
    cl("int32-max", "Strict", 2147483647, False, "top"),
    cl("strict-no-code", "Strict", None, False, ""),
    cl("lenient-range", "Lenient", 1, False, "one"),
    cl("lenient-zero", "Lenient", 0, True, ""),
    cl("lenient-above", "Lenient", 2, True, ""),
    cl("lenient-negative", "Lenient", -5, True, ""),
    cl("lenient-no-code", "Lenient", None, True, ""),
    {"name": "builtin-policy-without-file-retry", "kind": "backoff", "message": "conf.classify.v1.Strict",
     "retry": 3, "u": 0.5, "expect": {"delay_ms": 4500}},
    {"name": "builtin-policy-past-max", "kind": "backoff", "message": "conf.classify.v1.Lenient",
     "retry": 7, "expect": {"dead_letter": True}},
]
write("classify.json", ["conf/classify/v1/classify.proto", "conf/classify/v1/lenient.proto"], c)
ncl = len(c)

# ---------------------------------------------------------------- transitions
def tr(name, f, t, res):
    return {"name": name, "kind": "transition", "enum": "conf.state.v1.Ticket", "from": f, "to": t,
            "expect": {"result": res}}

c = [
    tr("open-to-in-progress", "OPEN", "IN_PROGRESS", "ALLOWED"),
    tr("reopened-to-in-progress", "REOPENED", "IN_PROGRESS", "ALLOWED"),
    tr("in-progress-to-resolved", "IN_PROGRESS", "RESOLVED", "ALLOWED"),
    tr("open-to-closed", "OPEN", "CLOSED", "ALLOWED"),
    tr("resolved-to-closed", "RESOLVED", "CLOSED", "ALLOWED"),
    tr("closed-to-reopened", "CLOSED", "REOPENED", "ALLOWED"),
    tr("resolved-to-reopened", "RESOLVED", "REOPENED", "ALLOWED"),
    tr("open-twice", "OPEN", "OPEN", "DUPLICATE"),
    tr("closed-twice", "CLOSED", "CLOSED", "DUPLICATE"),
    tr("in-progress-twice", "IN_PROGRESS", "IN_PROGRESS", "DUPLICATE"),
    tr("backwards", "RESOLVED", "IN_PROGRESS", "ILLEGAL"),
    tr("skip-a-state", "OPEN", "RESOLVED", "ILLEGAL"),
    tr("into-initial-state", "CLOSED", "OPEN", "ILLEGAL"),
    tr("in-progress-to-open", "IN_PROGRESS", "OPEN", "ILLEGAL"),
    tr("from-zero-value", "TICKET_UNSPECIFIED", "OPEN", "ILLEGAL"),
    tr("to-zero-value", "OPEN", "TICKET_UNSPECIFIED", "ILLEGAL"),
    tr("unknown-from", "BOGUS", "OPEN", "ILLEGAL"),
    tr("unknown-to", "OPEN", "BOGUS", "ILLEGAL"),
    tr("unknown-twice-is-not-duplicate", "BOGUS", "BOGUS", "ILLEGAL"),
    tr("names-are-case-sensitive", "open", "IN_PROGRESS", "ILLEGAL"),
    bk("assigned-key", "conf.state.v1.Assigned", {"ticket_id": "T-9", "assignee": "li.wei@example.com"},
       "ticket:T-9:assigned:li.wei%40example.com"),
]
write("transitions.json", ["conf/state/v1/ticket.proto"], c)
ntr = len(c)

# ---------------------------------------------------------------- aliases
# allow_alias: states compare by number (DESIGN.md). CREATED/NEW are 1,
# SHIPPED/SENT are 3; a transition declared on any alias holds for the
# number: 3 may be reached from 2 (on SHIPPED) and from 1 (on SENT).
def al(name, f, t, res):
    return {"name": name, "kind": "transition", "enum": "conf.state.v1.Shipment", "from": f, "to": t,
            "expect": {"result": res}}

c = [
    al("alias-equal-names-are-duplicate", "CREATED", "NEW", "DUPLICATE"),
    al("alias-equal-names-reversed", "NEW", "CREATED", "DUPLICATE"),
    al("alias-shipped-sent-duplicate", "SHIPPED", "SENT", "DUPLICATE"),
    al("alias-from-declared-on-alias", "CREATED", "PACKED", "ALLOWED"),
    al("alias-from-canonical-name", "NEW", "PACKED", "ALLOWED"),
    al("alias-into-canonical", "PACKED", "SHIPPED", "ALLOWED"),
    al("alias-into-alias", "PACKED", "SENT", "ALLOWED"),
    al("alias-transition-on-alias-holds-for-number", "NEW", "SHIPPED", "ALLOWED"),
    al("alias-transition-on-alias-by-its-name", "CREATED", "SENT", "ALLOWED"),
    al("alias-out-of-canonical", "SHIPPED", "DELIVERED", "ALLOWED"),
    al("alias-out-of-alias", "SENT", "DELIVERED", "ALLOWED"),
    al("alias-backwards", "SENT", "PACKED", "ILLEGAL"),
    al("alias-skip", "NEW", "DELIVERED", "ILLEGAL"),
    al("alias-zero", "SHIPMENT_UNSPECIFIED", "NEW", "ILLEGAL"),
    al("alias-unknown", "SHIPPED", "LOST", "ILLEGAL"),
]
write("aliases.json", ["conf/state/v1/alias.proto"], c)
ntr += len(c)

# ---------------------------------------------------------------- decisions
# What becomes of a delivery once its outcome is known (DESIGN.md's consume
# steps): ok is acknowledged; a duplicate and a key conflict are
# acknowledged as deduplicated (runtime-go also records the conflict); a
# failure is classified by the file's ranges (unclassified: RETRYABLE) and
# retried as retry n = retry_count+1 while n <= max_retries, after
# delay(n, u), else dead-lettered after n attempts. A retry copy or a
# replay is looked up in its retry chain before its handler runs, and any
# copy when it fails: a copy the chain row supersedes (a later replay, a
# later attempt, or the same attempt under another delivery id) is
# acknowledged as deduplicated and goes no further.
PAY = "conf.decision.v1.Payment"
PAYP = (1000, 2.0, 1000, 5000, 3)
NRP = (1000, 2.0, 1000, 60000, 0)

def de(name, outcome, expect, msg=PAY, code=None, retry_count=0, u=0.0, chain=None, delivery_id=None,
       replay_count=0):
    c = {"name": name, "kind": "decision", "message": msg, "outcome": outcome}
    if code is not None:
        c["code"] = code
    if retry_count:
        c["retry_count"] = retry_count
    if replay_count:
        c["replay_count"] = replay_count
    if u:
        c["u"] = u
    if chain is not None:
        c["chain"] = {"replay_count": chain[0], "attempt": chain[1], "delivery_id": chain[2]}
    if delivery_id is not None:
        c["delivery_id"] = delivery_id
    c["expect"] = expect
    return c

def ack(dedup=False):
    return {"decision": "ack", "deduplicated": dedup}

def retry(pol, n, u):
    return {"decision": "retry", "retry_count": n, "delay_ms": delay(pol, n, u)}

def dead(reason, code, attempts):
    return {"decision": "dead_letter", "reason": reason, "code": code, "attempts": attempts}

c = [
    de("ok-acks", "ok", ack()),
    de("duplicate-acks-deduplicated", "duplicate", ack(True)),
    de("conflict-acks-deduplicated", "conflict", ack(True)),
    de("retryable-first-failure", "error", retry(PAYP, 1, 0.5), code=50001, u=0.5),
    de("uncoded-is-unclassified-retryable", "error", retry(PAYP, 2, 0.0), retry_count=1),
    de("outside-every-range-is-unclassified", "error", retry(PAYP, 1, 0.25), code=60000, u=0.25),
    de("last-retry-capped-with-jitter", "error", retry(PAYP, 3, 0.999), code=59999, retry_count=2, u=0.999),
    de("retries-exhausted", "error", dead("retries_exhausted", 50001, 4), code=50001, retry_count=3, u=0.5),
    de("uncoded-retries-exhausted", "error", dead("retries_exhausted", 0, 4), retry_count=3),
    de("non-retryable-first-attempt", "error", dead("non_retryable", 40001, 1), code=40001),
    de("non-retryable-later-attempt", "error", dead("non_retryable", 49999, 3), code=49999, retry_count=2),
    de("no-retry-policy-dead-letters-at-once", "error", dead("retries_exhausted", 50001, 1), msg="conf.decision.v1.NoRetry",
       code=50001, u=0.5),
    de("no-retry-policy-ok", "ok", ack(), msg="conf.decision.v1.NoRetry"),
    # The retry chain.
    de("retry-copy-behind-a-later-attempt", "ok", ack(True), retry_count=1, chain=(0, 2, "decision/0/9"),
       delivery_id="decision/0/5"),
    de("second-copy-of-an-attempt", "ok", ack(True), retry_count=1, chain=(0, 1, "decision/0/5"),
       delivery_id="decision/0/6"),
    de("copy-that-went-on-redelivered-goes-on", "error", retry(PAYP, 2, 0.0), code=50001, retry_count=1,
       chain=(0, 1, "decision/0/5"), delivery_id="decision/0/5"),
    de("first-delivery-is-not-looked-up", "ok", ack(), chain=(0, 2, "decision/0/9"), delivery_id="decision/0/1"),
    de("first-delivery-failure-superseded", "error", ack(True), code=50001, chain=(0, 0, "decision/0/7"),
       delivery_id="decision/0/1"),
    de("first-delivery-failure-starts-the-chain", "error", dead("non_retryable", 40001, 1), code=40001,
       chain=None, delivery_id="decision/0/1"),
    de("replay-starts-afresh", "error", retry(PAYP, 1, 0.0), code=50001, replay_count=1,
       chain=(0, 3, "decision/0/9"), delivery_id="decision/0/12"),
    de("replay-behind-a-later-replay", "ok", ack(True), replay_count=1, chain=(2, 0, "decision/0/20"),
       delivery_id="decision/0/12"),
]
write("decision.json", ["conf/decision/v1/decision.proto"], c)
ndec = len(c)

# ---------------------------------------------------------------- handler calls
# A handler runs once per delivery attempt: a batch (one fetch, one shared
# transaction) whose member fails rolls back that member alone and runs no
# other handler again. A "fail" member fails on its first attempt only;
# Ledger's retries are due at once (max_retries 2), so a retryable failure
# runs the member's handler twice in all (two attempts) and a non-retryable
# one once (dead-lettered).
LEDGER = "conf.decision.v1.Ledger"

def hc(name, batch, code=None):
    retryable = code is None or 50000 <= code <= 59999  # the file's ranges; unclassified: RETRYABLE
    c = {"name": name, "kind": "handler_calls", "message": LEDGER, "batch": batch}
    if code is not None:
        c["code"] = code
    c["expect"] = {"handler_calls": [2 if m == "fail" and retryable else 1 for m in batch]}
    return c

c = [
    hc("middle-member-fails-retryable", ["ok", "ok", "fail", "ok", "ok"], 50001),
    hc("first-member-fails-non-retryable", ["fail", "ok", "ok"], 40001),
    hc("last-member-fails-uncoded", ["ok", "ok", "ok", "fail"]),
    hc("two-members-fail-non-retryable", ["ok", "fail", "ok", "fail", "ok", "ok"], 40001),
    hc("every-member-fails-retryable", ["fail", "fail", "fail"], 50001),
    hc("a-batch-of-one-fails", ["fail"], 50001),
    hc("nobody-fails", ["ok", "ok", "ok"]),
]
write("calls.json", ["conf/decision/v1/decision.proto"], c)
ndec += len(c)

# ---------------------------------------------------------------- txcheck
# A broker's check-back on a transactional (half) message (DESIGN.md, the
# outbox's alternative on RocketMQ): an empty message id is no envelope of
# ours: ROLLBACK; a row for the message id in msg_tx_check (its business
# transaction committed): COMMIT, however old; no row and the half message
# younger than the unresolved window (now - stored < window, so a clock
# that went backwards is young): UNKNOWN; no row and older: ROLLBACK. A
# producer commits the business transaction only before its deadline,
# stored + half the window; in whole ms an odd window's half is rounded
# down. No case names a message, but the runner builds every vector file's
# generated code (a file names at least one proto): this one names
# decision.proto, as calls.json does, and uses nothing of it.
STORED = 1_700_000_000_000
WINDOW = 60_000  # the default unresolved window
SMALL = 4_000

def mid(name):
    """A message id as an envelope's (32 hex digits), fixed by the case's name."""
    return hashlib.sha256(name.encode()).hexdigest()[:32]

def tx_answer(message_id, recorded, stored, now, window):
    if message_id == "":
        return "ROLLBACK"
    if recorded:
        return "COMMIT"
    return "UNKNOWN" if now - stored < window else "ROLLBACK"

def tx(name, age, window=WINDOW, recorded=False, message_id=None, others=(), stored=STORED):
    message_id = mid(name) if message_id is None else message_id
    c = {"name": name, "kind": "txcheck", "message_id": message_id}
    if recorded:
        c["recorded"] = True
    if others:
        c["other_recorded"] = list(others)
    c.update({"stored_ms": stored, "now_ms": stored + age, "unresolved_ms": window})
    c["expect"] = {"answer": tx_answer(message_id, recorded, stored, stored + age, window),
                   "deadline_ms": stored + window // 2}
    return c

c = [
    # A row answers COMMIT whatever the half message's age.
    tx("row-young-commits", 1_000, recorded=True),
    tx("row-at-the-window-commits", WINDOW, recorded=True),
    tx("row-long-past-the-window-commits", 3_600_000, recorded=True),
    tx("row-among-others-commits", 1_000, recorded=True, others=[mid("other-a"), mid("other-b")]),
    # No row: UNKNOWN while younger than the window, ROLLBACK from it on.
    tx("no-row-just-stored-unknown", 0),
    tx("no-row-young-unknown", 1_000),
    tx("no-row-one-ms-before-the-window-unknown", WINDOW - 1),
    tx("no-row-at-the-window-rolls-back", WINDOW),
    tx("no-row-one-ms-past-the-window-rolls-back", WINDOW + 1),
    tx("no-row-older-rolls-back", 2 * WINDOW),
    tx("no-row-a-day-old-rolls-back", 86_400_000),
    # Other message ids' rows do not count, however alike their ids.
    tx("other-rows-only-young-unknown", 1_000, message_id="m-1", others=["m-10", "m-", "m-2"]),
    tx("other-rows-only-old-rolls-back", WINDOW, message_id="m-1", others=["m-10", "m-", "m-2"]),
    # An empty message id is no envelope of ours: ROLLBACK at any age.
    tx("empty-id-young-rolls-back", 1_000, message_id=""),
    tx("empty-id-old-rolls-back", 2 * WINDOW, message_id=""),
    tx("empty-id-clock-backwards-rolls-back", -1_000, message_id=""),
    tx("empty-id-while-rows-exist-rolls-back", 1_000, message_id="", others=[mid("other-c")]),
    # A clock that went backwards (now before stored) is young.
    tx("clock-backwards-no-row-unknown", -5_000),
    tx("clock-backwards-past-a-window-no-row-unknown", -2 * WINDOW),
    tx("clock-backwards-row-commits", -5_000, recorded=True),
    # A small window.
    tx("small-window-one-ms-before-unknown", SMALL - 1, window=SMALL),
    tx("small-window-at-the-window-rolls-back", SMALL, window=SMALL),
    tx("small-window-young-for-the-default-rolls-back", 5_000, window=SMALL),
    tx("small-window-row-commits", 5_000, window=SMALL, recorded=True),
    # Odd windows: the deadline is stored + window // 2.
    tx("odd-window-one-ms-before-unknown", 4_000, window=4_001),
    tx("odd-window-at-the-window-rolls-back", 4_001, window=4_001),
    # Halves whose floor is odd, so that rounding half to even is told apart from rounding down.
    tx("odd-window-odd-half-one-ms-before-unknown", 4_002, window=4_003),
    tx("odd-window-odd-half-at-the-window-rolls-back", 4_003, window=4_003),
    tx("three-ms-window-row-commits", 3, window=3, recorded=True),
    tx("one-ms-window-just-stored-unknown", 0, window=1),
    tx("one-ms-window-at-the-window-rolls-back", 1, window=1),
    tx("odd-default-plus-one-stored-at-the-epoch", 30_000, window=WINDOW + 1, stored=0),
    tx("odd-day-window-row-commits", 1_000, window=86_400_001, recorded=True),
]
# Hand checks of the rule: DESIGN's default window, and the odd ones' deadlines.
assert tx_answer("x", False, STORED, STORED + 59_999, WINDOW) == "UNKNOWN"
assert tx_answer("x", False, STORED, STORED + 60_000, WINDOW) == "ROLLBACK"
assert tx_answer("", True, STORED, STORED, WINDOW) == "ROLLBACK"
assert STORED + WINDOW // 2 == 1_700_000_030_000 and STORED + 4_001 // 2 == 1_700_000_002_000 and 1 // 2 == 0
assert 4_003 // 2 == 2_001 and 3 // 2 == 1
write("txcheck.json", ["conf/decision/v1/decision.proto"], c)
ntx = len(c)
print(nkeys, npol, ncl, ntr, ndec, ntx, nkeys + npol + ncl + ntr + ndec + ntx)
