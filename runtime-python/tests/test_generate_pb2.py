"""setup.generate_pb2 rewrites the generated modules in the source tree, which tests and services import from
while a pip install of the same tree builds (make test runs check-python-range beside other suites): a file is
replaced whole or left alone, never truncated in place."""

from __future__ import annotations

import importlib.util
import os
import pathlib
from types import ModuleType

GENERATED = ["msgcontract/v1/envelope_pb2.py", "msgcontract/v1/envelope_pb2.pyi",
             "msgcontract/v1/options_pb2.py", "msgcontract/v1/options_pb2.pyi"]


def _setup() -> ModuleType:
    path = pathlib.Path(__file__).resolve().parent.parent / "setup.py"
    spec = importlib.util.spec_from_file_location("msgcontract_runtime_setup", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generate_pb2_leaves_unchanged_files_alone(tmp_path: pathlib.Path) -> None:
    setup = _setup()
    setup.generate_pb2(str(tmp_path))
    before = {rel: os.stat(tmp_path / rel) for rel in GENERATED}
    setup.generate_pb2(str(tmp_path))
    for rel, st in before.items():
        now = os.stat(tmp_path / rel)
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), f"{rel} was rewritten unchanged"


def test_generate_pb2_replaces_a_changed_file_whole(tmp_path: pathlib.Path) -> None:
    setup = _setup()
    setup.generate_pb2(str(tmp_path))
    target = tmp_path / "msgcontract/v1/options_pb2.py"
    want = target.read_text(encoding="utf-8")
    target.write_text("# stale\n", encoding="utf-8")
    stale = os.stat(target).st_ino
    setup.generate_pb2(str(tmp_path))
    assert target.read_text(encoding="utf-8") == want
    # A new file renamed over the old one: a reader holding the old one open never sees it cut short.
    assert os.stat(target).st_ino != stale, "the module was rewritten in place"
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o644)
    assert not [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")], "a temporary file was left"
