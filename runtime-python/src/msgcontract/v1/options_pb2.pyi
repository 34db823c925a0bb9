from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Unclassified(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNCLASSIFIED_UNSPECIFIED: _ClassVar[Unclassified]
    RETRYABLE: _ClassVar[Unclassified]
    NON_RETRYABLE: _ClassVar[Unclassified]
UNCLASSIFIED_UNSPECIFIED: Unclassified
RETRYABLE: Unclassified
NON_RETRYABLE: Unclassified
DEFAULTS_FIELD_NUMBER: _ClassVar[int]
defaults: _descriptor.FieldDescriptor
EVENT_FIELD_NUMBER: _ClassVar[int]
event: _descriptor.FieldDescriptor
STATE_MACHINE_FIELD_NUMBER: _ClassVar[int]
state_machine: _descriptor.FieldDescriptor
TRANSITION_FIELD_NUMBER: _ClassVar[int]
transition: _descriptor.FieldDescriptor

class RetryPolicy(_message.Message):
    __slots__ = ("base_delay", "multiplier", "jitter", "max_delay", "max_retries")
    BASE_DELAY_FIELD_NUMBER: _ClassVar[int]
    MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    MAX_DELAY_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    base_delay: str
    multiplier: float
    jitter: str
    max_delay: str
    max_retries: int
    def __init__(self, base_delay: _Optional[str] = ..., multiplier: _Optional[float] = ..., jitter: _Optional[str] = ..., max_delay: _Optional[str] = ..., max_retries: _Optional[int] = ...) -> None: ...

class ErrorRange(_message.Message):
    __slots__ = ("to", "retryable", "name")
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    to: int
    retryable: bool
    name: str
    def __init__(self, to: _Optional[int] = ..., retryable: bool = ..., name: _Optional[str] = ..., **kwargs) -> None: ...

class Defaults(_message.Message):
    __slots__ = ("retry", "error_ranges", "unclassified")
    RETRY_FIELD_NUMBER: _ClassVar[int]
    ERROR_RANGES_FIELD_NUMBER: _ClassVar[int]
    UNCLASSIFIED_FIELD_NUMBER: _ClassVar[int]
    retry: RetryPolicy
    error_ranges: _containers.RepeatedCompositeFieldContainer[ErrorRange]
    unclassified: Unclassified
    def __init__(self, retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., error_ranges: _Optional[_Iterable[_Union[ErrorRange, _Mapping]]] = ..., unclassified: _Optional[_Union[Unclassified, str]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("topic", "event_type", "biz_key", "retry", "target_state")
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    BIZ_KEY_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    TARGET_STATE_FIELD_NUMBER: _ClassVar[int]
    topic: str
    event_type: str
    biz_key: str
    retry: RetryPolicy
    target_state: str
    def __init__(self, topic: _Optional[str] = ..., event_type: _Optional[str] = ..., biz_key: _Optional[str] = ..., retry: _Optional[_Union[RetryPolicy, _Mapping]] = ..., target_state: _Optional[str] = ...) -> None: ...

class StateMachine(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Transition(_message.Message):
    __slots__ = ()
    FROM_FIELD_NUMBER: _ClassVar[int]
    def __init__(self, **kwargs) -> None: ...
