"""A quick run of the fuzzer (tests/fuzz/fuzz.py): a few hundred inputs per format, no
internal error, no timeout, and every injected error reported at its line."""
import importlib.util
import os
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mapeval_fuzz", Path(__file__).with_name("fuzz.py"))
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)


@pytest.mark.parametrize("fmt", fuzz.FORMATS)
def test_quick_fuzz_finds_no_internal_error_timeout_or_wrong_line(fmt):
    summary = fuzz.run(fmt, count=200, seed=12345, quick=True, jobs=1)
    bad = {cls: summary["classes"][cls] for cls in fuzz.BAD_CLASSES}
    assert bad == dict.fromkeys(fuzz.BAD_CLASSES, 0), summary["examples"]
    assert summary["classes"]["ok"] > 0 and summary["classes"]["bad input"] > 0


def test_classification():
    path = os.path.join("d", "input.sdf")
    assert fuzz.classify(0, "", None, path) == "ok"
    assert fuzz.classify(2, f"{path}:3:1: error: x", None, path) == "bad input"
    assert fuzz.classify(2, "mapeval: error: x", None, path) == "unpositioned"
    assert fuzz.classify(2, f"{path}:4:1: error: x", 3, path) == "wrong line"
    assert fuzz.classify(0, "", 3, path) == "missed"
    assert fuzz.classify(1, "internal error", None, path) == "exit 1"
    assert fuzz.classify("timeout", "", None, path) == "timeout"
