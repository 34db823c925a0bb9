"""State machines: whether an entity may move from one state to another."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence

from google.protobuf import descriptor as _descriptor


class Transit(str, enum.Enum):
    """The answer of can_transit, identical in every language."""

    ALLOWED = "ALLOWED"
    """from is a listed predecessor of to."""
    DUPLICATE = "DUPLICATE"
    """from == to: the work was already done, succeed quietly."""
    ILLEGAL = "ILLEGAL"
    """Anything else: out-of-order or dirty data, alert."""


@dataclasses.dataclass(frozen=True)
class StateMachine:
    """The states of an entity, each mapped to the states it may be reached from."""

    full_name: str
    predecessors: Mapping[str, Sequence[str]]
    enum_type: _descriptor.EnumDescriptor | None = None
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """allow_alias names mapped to the canonical name of their number."""

    def can_transit(self, from_state: str | int, to_state: str | int) -> Transit:
        """Answers whether an entity in from_state may move to to_state.

        States are value names or numbers, compared by number: allow_alias
        names of one number are one state. Unknown states are ILLEGAL; equal
        states are DUPLICATE; a listed predecessor is ALLOWED; anything else
        is ILLEGAL.
        """
        f, t = self._name(from_state), self._name(to_state)
        target = self.predecessors.get(t)
        if target is None or f not in self.predecessors:
            return Transit.ILLEGAL
        if f == t:
            return Transit.DUPLICATE
        return Transit.ALLOWED if f in target else Transit.ILLEGAL

    def _name(self, state: str | int) -> str:
        if isinstance(state, str):
            return self.aliases.get(state, state)
        if self.enum_type is not None:
            v = self.enum_type.values_by_number.get(state)
            if v is not None:
                return self.aliases.get(str(v.name), str(v.name))
        return ""
