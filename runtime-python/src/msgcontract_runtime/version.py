"""The runtime's version, checked by every generated contract module at import time."""

from __future__ import annotations

RUNTIME_VERSION = "0.2.0"
"""The release of the msgcontract-runtime distribution."""

API_LEVEL = 3
"""The API level this runtime provides.

It grows by one whenever generated code starts to use something earlier
runtimes lack; generated modules name the level they need.
"""


def require_version(level: int, module: str = "a generated contract module") -> None:
    """Fails at import time when this runtime is older than module needs.

    Generated contract modules call it with the API level they were generated
    for and their own name.
    """
    if level > API_LEVEL:
        raise ImportError(
            f"{module} was generated for msgcontract-runtime API level {level}, but the "
            f"installed msgcontract-runtime {RUNTIME_VERSION} provides level {API_LEVEL}; "
            "upgrade it (pip install -U msgcontract-runtime) to the msgcontract release "
            "that generated the code"
        )
