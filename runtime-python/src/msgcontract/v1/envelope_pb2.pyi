from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Envelope(_message.Message):
    __slots__ = ("message_id", "biz_key", "event_type", "schema_subject", "schema_version", "occurred_at", "retry_count", "not_before", "last_error", "trace", "content_type", "payload", "topic", "first_failed_at", "replay_count")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    BIZ_KEY_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_SUBJECT_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    RETRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    NOT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    FIRST_FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_COUNT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    biz_key: str
    event_type: str
    schema_subject: str
    schema_version: int
    occurred_at: int
    retry_count: int
    not_before: int
    last_error: LastError
    trace: TraceContext
    content_type: str
    payload: bytes
    topic: str
    first_failed_at: int
    replay_count: int
    def __init__(self, message_id: _Optional[str] = ..., biz_key: _Optional[str] = ..., event_type: _Optional[str] = ..., schema_subject: _Optional[str] = ..., schema_version: _Optional[int] = ..., occurred_at: _Optional[int] = ..., retry_count: _Optional[int] = ..., not_before: _Optional[int] = ..., last_error: _Optional[_Union[LastError, _Mapping]] = ..., trace: _Optional[_Union[TraceContext, _Mapping]] = ..., content_type: _Optional[str] = ..., payload: _Optional[bytes] = ..., topic: _Optional[str] = ..., first_failed_at: _Optional[int] = ..., replay_count: _Optional[int] = ...) -> None: ...

class LastError(_message.Message):
    __slots__ = ("code", "message", "retryable", "range", "failed_at")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    retryable: bool
    range: str
    failed_at: int
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., retryable: bool = ..., range: _Optional[str] = ..., failed_at: _Optional[int] = ...) -> None: ...

class TraceContext(_message.Message):
    __slots__ = ("traceparent", "tracestate")
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    TRACESTATE_FIELD_NUMBER: _ClassVar[int]
    traceparent: str
    tracestate: str
    def __init__(self, traceparent: _Optional[str] = ..., tracestate: _Optional[str] = ...) -> None: ...
