"""msgcontract's runtime for generated Python contracts.

Generated contract modules import it; services use it through them and
directly (``import msgcontract_runtime as mc``). It follows the cross-language
rules that Go and Java follow too, one module per concern:

- ``bizkey``: biz_key rendering (percent-encoding, EMPTY_FIELD, KEY_TOO_LONG);
- ``backoff``: the retry policy and its backoff formula;
- ``classify``: error classification by error-code ranges;
- ``statemachine``: allowed state transitions;
- ``event``: one event's contract as data;
- ``envelope``: the envelope codec (JSON always with proto field names);
- ``dedup``: the dedup claim table on a DB-API connection;
- ``consumer``: a transport-neutral consumer skeleton and the decisions
  (``admit``, ``failed``) it shares with the asyncio consumer;
- ``aio``: the asyncio consumer (``AsyncConsumer``), with ``aio.sqlite``
  (aiosqlite: the embedded SQLite queue and a SQLite database) and
  ``aio.postgres`` (asyncpg) behind the optional extras of the same names;
- ``observe``: metrics (``[prometheus]`` extra) and JSON log lines in the
  vocabulary shared with Go and Java (not imported here: import it to use it);
- ``version``: the import-time check generated modules run;
- ``include``: where msgcontract's own .proto files are, for protoc's -I.

The message classes of msgcontract's own protos ship beside it as
``msgcontract.v1.options_pb2`` and ``msgcontract.v1.envelope_pb2``, the import
names protoc's Python output uses for them.
"""

from msgcontract_runtime import payload_hash
from msgcontract_runtime.backoff import RetryPolicy
from msgcontract_runtime.bizkey import MAX_KEY_LEN, BizKeyBuilder, BizKeyError, escape
from msgcontract_runtime.classify import (
    Classification,
    ContractError,
    ErrorRange,
    ErrorRules,
    NonRetryableError,
    RetryableError,
    decode_failure,
)
from msgcontract_runtime.consumer import (
    CODE_DECODE,
    MAX_ERROR_MESSAGE,
    Ack,
    Admitted,
    Consumer,
    DeadLetter,
    Decision,
    Defer,
    DeliveryTracer,
    Handler,
    Observer,
    Outcome,
    Retry,
    admit,
    failed,
)
from msgcontract_runtime.dedup import (
    DEDUP_TABLE,
    claim,
    dedup_insert_sql,
    migrate,
)
from msgcontract_runtime.envelope import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_PROTO,
    decode,
    decode_json,
    encode,
    encode_json,
    new_envelope,
    new_message_id,
    payload,
    to_json,
)
from msgcontract_runtime.event import DecodeError, EventSpec
from msgcontract_runtime.statemachine import StateMachine, Transit
from msgcontract_runtime.version import RUNTIME_VERSION, compare_versions, require_version

__all__ = [
    "CODE_DECODE",
    "CONTENT_TYPE_JSON",
    "CONTENT_TYPE_PROTO",
    "DEDUP_TABLE",
    "MAX_ERROR_MESSAGE",
    "MAX_KEY_LEN",
    "RUNTIME_VERSION",
    "Ack",
    "Admitted",
    "BizKeyBuilder",
    "BizKeyError",
    "Classification",
    "Consumer",
    "ContractError",
    "DeadLetter",
    "Decision",
    "DecodeError",
    "Defer",
    "ErrorRange",
    "ErrorRules",
    "EventSpec",
    "Handler",
    "NonRetryableError",
    "Retry",
    "DeliveryTracer",
    "Observer",
    "Outcome",
    "RetryPolicy",
    "RetryableError",
    "StateMachine",
    "Transit",
    "admit",
    "claim",
    "decode",
    "decode_failure",
    "decode_json",
    "dedup_insert_sql",
    "encode",
    "encode_json",
    "escape",
    "failed",
    "payload_hash",
    "migrate",
    "new_envelope",
    "new_message_id",
    "payload",
    "compare_versions",
    "require_version",
    "to_json",
]
