"""Where msgcontract's own .proto files are, for protoc's -I.

``python -m msgcontract_runtime.include`` prints the directory that holds
``msgcontract/v1/options.proto`` and ``msgcontract/v1/envelope.proto``, so a
contract's ``import "msgcontract/v1/options.proto";`` resolves with::

    python -m grpc_tools.protoc -I proto -I "$(python -m msgcontract_runtime.include)" ...
"""

from __future__ import annotations

import pathlib


def include_dir() -> str:
    """Returns the directory to pass to protoc's -I."""
    return str(pathlib.Path(__file__).resolve().parent / "proto")


if __name__ == "__main__":
    print(include_dir())
