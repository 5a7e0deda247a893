"""The JSON writer (dsl.json_export.json_text) against the plain rule it stands for:
json.dumps of a copy converted item by item (the indented form with the standard
library's pure-Python encoder), on documents with non-finite floats, fractions, tuples,
numpy scalars and arrays, keys of every kind JSON writes, and strings holding braces."""
import json
import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from dsl.json_export import json_safe, json_text
from mapping.output import print_json


def reference(obj):
    """The convention spelled out one case at a time, without the writer's code."""
    if isinstance(obj, (np.generic, np.ndarray)):
        return reference(obj.tolist())
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        return obj if math.isfinite(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Fraction):
        return obj.numerator if obj.denominator == 1 else float(obj)
    if isinstance(obj, dict):
        return {key(k): reference(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [reference(v) for v in obj]
    return obj


def key(k):
    if isinstance(k, float) and not math.isfinite(k):
        return reference(k)
    if k is None or isinstance(k, (bool, str, float)) or type(k) is int:
        return next(iter(json.loads(json.dumps({k: 0}))))  # as JSON writes a key
    return str(k)


def canonical(text: str) -> str:
    """The text of the parsed document, one form per value (1 and 1.0 stay apart)."""
    return json.dumps(json.loads(text), sort_keys=True)


braces = st.text(alphabet="{}[], :\"\\ab\u00e9\n", max_size=6)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5), braces,
    st.fractions(max_denominator=7),
    st.integers(-9, 9).map(np.int64), st.floats(width=32).map(np.float64),
    st.booleans().map(np.bool_),
    st.lists(st.floats(allow_nan=True), max_size=3).map(np.array))
keys = st.one_of(st.text(max_size=4), braces, st.integers(-5, 5), st.booleans(), st.none(),
                 st.floats(allow_nan=False), st.just(math.inf), st.integers(0, 3).map(np.int64))
#: keys no two of which write alike ("null" and None would make one key of two)
distinct_keys = st.one_of(st.text(max_size=4).map("k".__add__), braces.map("{".__add__),
                          st.integers(-5, 5), st.booleans(), st.none(),
                          st.floats(allow_nan=False), st.just(math.inf),
                          st.integers(0, 3).map(np.int64))
flat_dict = st.dictionaries(st.text(max_size=3), scalars, max_size=4)
flat_list = st.lists(scalars, max_size=4)
documents = st.recursive(
    st.one_of(scalars, st.lists(flat_dict, min_size=1, max_size=6),
              st.lists(flat_list, min_size=1, max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(distinct_keys, inner, max_size=4)),
    max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_the_writer_reads_back_as_the_convention_says(document):
    expected = json.dumps(reference(document), indent=2, allow_nan=False)
    assert canonical(json_text(document)) == canonical(expected)
    assert json_text(document, indent=False) == \
        json.dumps(reference(document), allow_nan=False)
    assert canonical(json.dumps(json_safe(document), allow_nan=False)) == canonical(expected)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(keys, st.integers(0, 3), min_size=1, max_size=5))
def test_keys_are_written_as_json_writes_them(document):
    # (keys that write alike, None and "null", are one key of the document read back)
    assert list(json.loads(json_text(document))) == list(dict.fromkeys(map(key, document)))


def test_layout_a_member_a_line_and_a_flat_item_a_line(capsys):
    document = {"throughput": Fraction(1, 4), "buffers": {"c": math.inf, "d": 2},
                "cycle": ("a", "b"), "empty": [], "none": {},
                "schedule": {"a": [{"firing": "a#0", "start": 0, "end": 1.5},
                                   {"firing": "a}, {b", "start": np.int64(2), "end": 3}],
                             "b": [[1, np.float64("nan")], [2, 3]]}}
    print_json(document)
    assert capsys.readouterr().out == """{
  "throughput": 0.25,
  "buffers": {
    "c": "inf",
    "d": 2
  },
  "cycle": ["a", "b"],
  "empty": [],
  "none": {},
  "schedule": {
    "a": [
      {"firing": "a#0", "start": 0, "end": 1.5},
      {"firing": "a}, {b", "start": 2, "end": 3}
    ],
    "b": [
      [1, "nan"],
      [2, 3]
    ]
  }
}
"""
