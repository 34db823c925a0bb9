"""One event's contract as data, with payload parsing."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Generic, TypeVar

from google.protobuf import json_format as _json_format, message as _message
from google.protobuf.message import DecodeError as _ProtoDecodeError

from msgcontract_runtime.backoff import RetryPolicy
from msgcontract_runtime.classify import ErrorRules


class DecodeError(Exception):
    """An envelope or payload that cannot be decoded; it is never retried."""


M = TypeVar("M", bound=_message.Message)


@dataclasses.dataclass(frozen=True)
class EventSpec(Generic[M]):
    """One event's contract as data: where it goes, its key, retry policy and rules."""

    full_name: str
    topic: str
    event_type: str
    biz_key_template: str
    retry: RetryPolicy
    rules: ErrorRules
    target_state: str
    message_type: type[M]
    key_function: Callable[[M], str]

    def biz_key(self, message: M) -> str:
        """Renders the biz_key of message; raises BizKeyError."""
        return self.key_function(message)

    def parse_json(self, text: str | bytes) -> M:
        """Parses a payload in proto JSON (either field-name form)."""
        m = self.message_type()
        try:
            _json_format.Parse(text, m)
        except _json_format.ParseError as e:
            raise DecodeError(f"payload is not valid proto JSON for {self.full_name}: {e}") from e
        return m

    def parse_binary(self, payload: bytes) -> M:
        """Parses a binary payload."""
        m = self.message_type()
        try:
            m.ParseFromString(payload)
        except _ProtoDecodeError as e:
            raise DecodeError(f"payload does not decode as {self.full_name}: {e}") from e
        return m
