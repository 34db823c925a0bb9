"""biz_key rendering: percent-encoding, EMPTY_FIELD and KEY_TOO_LONG, as in Go and Java."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

MAX_KEY_LEN = 512
"""The longest biz_key allowed, in bytes after encoding."""

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = "0123456789ABCDEF"

class _EnumValue(Protocol):
    @property
    def name(self) -> str: ...


class _EnumType(Protocol):
    @property
    def values_by_number(self) -> Mapping[int, _EnumValue]: ...


class EnumField(Protocol):
    """An enum field's descriptor, as enum_value reads it: both
    google.protobuf.descriptor.FieldDescriptor and the upb backend's, which
    types-protobuf's 7.x stubs tell apart (Message.DESCRIPTOR.fields_by_name)."""

    @property
    def enum_type(self) -> _EnumType | None: ...


class BizKeyError(Exception):
    """A biz_key that cannot be rendered; the producer must not publish the event.

    code is EMPTY_FIELD (a placeholder is an empty string, an unset sub-message
    on a dotted path or an absent optional field) or KEY_TOO_LONG (the key is
    over 512 bytes after encoding).
    """

    EMPTY_FIELD = "EMPTY_FIELD"
    KEY_TOO_LONG = "KEY_TOO_LONG"

    def __init__(self, code: str, field: str = "", length: int = 0) -> None:
        if code == BizKeyError.EMPTY_FIELD:
            text = f"{code}: biz_key field {field!r} is empty or unset; the producer must set it"
        else:
            text = f"{code}: biz_key is {length} bytes after encoding, over the {MAX_KEY_LEN}-byte limit"
        super().__init__(text)
        self.code = code
        self.field = field
        self.length = length


def escape(s: str) -> str:
    """Percent-encodes s as UTF-8 bytes outside A-Z a-z 0-9 - . _ ~, with upper-case hex."""
    out = []
    for c in s.encode("utf-8"):
        if c in _UNRESERVED:
            out.append(chr(c))
        else:
            out.append("%" + _HEX[c >> 4] + _HEX[c & 15])
    return "".join(out)


class BizKeyBuilder:
    """Renders a biz_key in template order; the first failure sticks and key() raises it."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._failed: str | None = None

    def literal(self, s: str) -> None:
        """Appends template text as written."""
        self._parts.append(s)

    def string(self, field: str, value: str) -> None:
        """Appends a string field's value, percent-encoded; an empty value is EMPTY_FIELD."""
        if value == "":
            self.fail(field)
            return
        self._parts.append(escape(value))

    def integer(self, value: int) -> None:
        """Appends an integer of any kind in base 10."""
        self._parts.append(str(int(value)))

    def boolean(self, value: bool) -> None:
        """Appends true or false."""
        self._parts.append("true" if value else "false")

    def enum_value(self, field: EnumField, number: int) -> None:
        """Appends an enum value by name, or by number when an open enum holds an unknown number."""
        enum_type = field.enum_type
        value = enum_type.values_by_number.get(number) if enum_type is not None else None
        self._parts.append(value.name if value is not None else str(number))

    def fail(self, field: str) -> None:
        """Records an EMPTY_FIELD failure for field unless one is recorded already."""
        if self._failed is None:
            self._failed = field

    def key(self) -> str:
        """Returns the rendered key or raises the first failure."""
        if self._failed is not None:
            raise BizKeyError(BizKeyError.EMPTY_FIELD, field=self._failed)
        k = "".join(self._parts)
        n = len(k.encode("utf-8"))
        if n > MAX_KEY_LEN:
            raise BizKeyError(BizKeyError.KEY_TOO_LONG, length=n)
        return k
