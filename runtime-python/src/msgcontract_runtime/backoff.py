"""The retry policy and its backoff formula, as in Go and Java."""

from __future__ import annotations

import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """A resolved retry policy.

    Retry n (1-based) waits d(n) + floor(jitter_ms * u), u uniform in [0,1),
    where d(1) = base_ms and d(n) = min(max_delay_ms, floor(d(n-1) *
    multiplier)), iterated in integer milliseconds (never pow) so every
    language computes the same number. After max_retries retries the message
    is dead-lettered.
    """

    base_ms: int
    multiplier: float
    jitter_ms: int
    max_delay_ms: int
    max_retries: int

    def base_delay(self, n: int) -> int:
        """Returns d(n), the delay of retry n without jitter; 0 for n below 1."""
        if n < 1:
            return 0
        d = self.base_ms
        cap = float(self.max_delay_ms)
        for _ in range(2, n + 1):
            product = float(d) * self.multiplier
            # floor(p) >= cap exactly when p >= cap, cap being integral;
            # comparing first keeps an infinite product from reaching floor.
            d = self.max_delay_ms if product >= cap else math.floor(product)
        return d

    def delay_ms(self, n: int, u: float) -> int:
        """Returns the delay of retry n in milliseconds for the uniform sample u in [0,1)."""
        return self.base_delay(n) + math.floor(float(self.jitter_ms) * u)

    def dead_letter(self, n: int) -> bool:
        """Reports whether retry n is past the policy: the message must be dead-lettered instead."""
        return n > self.max_retries
