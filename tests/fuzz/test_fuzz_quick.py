"""A quick run of the fuzzer (tests/fuzz/fuzz.py): a few hundred inputs per text format,
a hundred tables, option values and inputs of each importer (sdf3, onnx, preesm), two
signals; no internal error, traceback, timeout or file left behind, and every injected
error reported at its line."""
import importlib.util
import os
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mapeval_fuzz", Path(__file__).with_name("fuzz.py"))
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)


@pytest.mark.parametrize("fmt, count", [*((f, 200) for f in fuzz.TEXT_FORMATS),
                                        ("csv", 100), ("options", 100), ("sdf3", 100),
                                        ("onnx", 100), ("preesm", 100)])
def test_quick_fuzz_finds_no_internal_error_timeout_or_wrong_line(fmt, count, monkeypatch):
    if fmt == "onnx":
        pytest.importorskip("onnx")
    if fmt == "csv":            # a fit of a few hundred rows: seconds on a loaded machine
        monkeypatch.setattr(fuzz, "BUDGET", 30)
    summary = fuzz.run(fmt, count=count, seed=12345, quick=True, jobs=1)
    bad = {cls: summary["classes"][cls] for cls in fuzz.BAD_CLASSES}
    assert bad == dict.fromkeys(fuzz.BAD_CLASSES, 0), summary["examples"]
    # argparse and protobuf: no line to point at
    refused = "unpositioned" if fmt in ("options", "onnx") else "bad input"
    assert summary["classes"]["ok"] > 0 and summary["classes"][refused] > 0


def test_a_signal_leaves_nothing_behind():
    cases = fuzz.make_cases("signals", 2, 3, True)
    for case in cases:
        case["delay"] = 1.0
        result = fuzz.run_case(case)
        assert result["class"] in ("ok", "interrupted"), result


def test_classification():
    path = os.path.join("d", "input.sdf")
    assert fuzz.classify(0, "", None, path) == "ok"
    assert fuzz.classify(2, f"{path}:3:1: error: x", None, path) == "bad input"
    assert fuzz.classify(2, "mapeval: error: x", None, path) == "unpositioned"
    assert fuzz.classify(2, f"{path}:4:1: error: x", 3, path) == "wrong line"
    assert fuzz.classify(0, "", 3, path) == "missed"
    assert fuzz.classify(1, "internal error", None, path) == "exit 1"
    assert fuzz.classify("timeout", "", None, path) == "timeout"
    assert fuzz.classify(2, "Traceback (most recent call last):\n", None, path) == "traceback"
