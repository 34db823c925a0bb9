"""Error classification by a contract's error-code ranges."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence


@dataclasses.dataclass(frozen=True)
class ErrorRange:
    """An inclusive range of handler error codes and how failures in it are treated."""

    start: int
    end: int
    retryable: bool
    name: str

    def contains(self, code: int) -> bool:
        """Reports whether code lies in the range."""
        return self.start <= code <= self.end


@dataclasses.dataclass(frozen=True)
class Classification:
    """The classification of a failure; range_name is "" when no range holds the code."""

    retryable: bool
    range_name: str


class ContractError(Exception):
    """A handler failure carrying a contract error code.

    Raise it (or let ErrorRules.error pick the subclass) so the consumer
    classifies the failure by the contract's ranges; the code decides, never
    the subclass.
    """

    def __init__(self, code: int, range_name: str, message: str) -> None:
        super().__init__(f"code {code}: {message}")
        self.code = code
        self.range_name = range_name


class RetryableError(ContractError):
    """A failure whose code the contract retries."""


class NonRetryableError(ContractError):
    """A failure whose code the contract never retries: the message is dead-lettered."""


@dataclasses.dataclass(frozen=True)
class ErrorRules:
    """A contract's error ranges and its unclassified setting."""

    ranges: Sequence[ErrorRange]
    unclassified_retryable: bool

    def classify(self, code: int) -> Classification:
        """Classifies an error carrying code by the range holding it, else as unclassified."""
        for r in self.ranges:
            if r.contains(code):
                return Classification(r.retryable, r.name)
        return Classification(self.unclassified_retryable, "")

    def no_code(self) -> Classification:
        """Classifies an error that carries no code."""
        return Classification(self.unclassified_retryable, "")

    def classify_error(self, err: BaseException) -> Classification:
        """Classifies any handler failure: by code for a ContractError, else as uncoded."""
        if isinstance(err, ContractError):
            return self.classify(err.code)
        return self.no_code()

    def error(self, code: int, message: str) -> ContractError:
        """Returns RetryableError or NonRetryableError for code, as the rules classify it."""
        c = self.classify(code)
        if c.retryable:
            return RetryableError(code, c.range_name, message)
        return NonRetryableError(code, c.range_name, message)


def decode_failure() -> Classification:
    """Classifies a payload that failed to decode: never retryable."""
    return Classification(False, "")
