"""Units that convert (issue 41): a measured column's unit (``time [ms]`` in its header, or
``--measured-unit``) is converted to its metric's unit in the ``.moa`` as the table is
read, so that a fit gives the same parameters in the ``.moa``'s units whatever the table's
unit; units that do not convert are an error naming both."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import dsl
from mapping.calibration.measurements import read_measurements
from mapping.cli.main import main
from mapping.errors import InputError
from moa.units import UnitError, scale, split_unit

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial"
FILES = [str(TUTORIAL / "camera.sdf"), str(TUTORIAL / "board.moa")]
OPTIONS = ["--actor-column", "pe_{actor}", "--aggregate", "max", "--fit", "a_cpu,a_dsp,a_bus",
           "--test-fraction", "0", "--starts", "0"]


def rescaled(tmp_path, header: str, factor: float, name: str = "t.csv") -> str:
    """The tutorial's table with its ``time_s`` column renamed ``header`` and multiplied
    by ``factor``."""
    rows = list(csv.reader((TUTORIAL / "measurements.csv").open()))
    i = rows[0].index("time_s")
    rows[0][i] = header
    for row in rows[1:]:
        row[i] = repr(float(row[i]) * factor)
    path = tmp_path / name
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return str(path)


def fitted(capsys, table, measured, *extra):
    assert main(["fit", *FILES, table, "--measured", measured, *OPTIONS, *extra,
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_scale_and_header_units():
    assert scale("ms", "s") == pytest.approx(1e-3)
    assert scale("us", "ms") == pytest.approx(1e-3)
    assert scale("mJ", "J") == pytest.approx(1e-3)
    assert scale("GFLOP/s", "ops/s") == pytest.approx(1e9)
    assert scale("s", "s") == 1.0
    with pytest.raises(UnitError, match="'J' does not convert to 's'"):
        scale("J", "s")
    with pytest.raises(UnitError, match="'parsecz' or 's' is not a unit"):
        scale("parsecz", "s")
    assert split_unit("time [ms]") == ("time", "ms")
    assert split_unit("quanta_big[0]") == ("quanta_big[0]", None)    # a name, not a unit
    assert split_unit("t_w") == ("t_w", None)


def test_a_table_in_milliseconds_fits_the_parameters_of_the_table_in_seconds(tmp_path,
                                                                              capsys):
    seconds = fitted(capsys, str(TUTORIAL / "measurements.csv"), "time_s")
    header = fitted(capsys, rescaled(tmp_path, "time [ms]", 1e3), "time")
    option = fitted(capsys, rescaled(tmp_path, "t_ms", 1e3, "o.csv"), "t_ms",
                    "--measured-unit", "ms")
    micro = fitted(capsys, rescaled(tmp_path, "time [us]", 1e6, "u.csv"), "time [us]")
    for doc in (header, option, micro):
        assert doc["fitted"].keys() == seconds["fitted"].keys()
        for name, value in seconds["fitted"].items():
            assert doc["fitted"][name] == pytest.approx(value, rel=1e-7), name
        assert doc["mape"] == pytest.approx(seconds["mape"], rel=1e-7)
    # the ground truth of make_measurements.py, within 3%: 5e-9, 0.8e-9 and 3e-9 s
    assert seconds["fitted"]["a_cpu"] == pytest.approx(5e-9, rel=0.03)
    assert header["units"] == {"metric": "s", "measured": "s", "measured_column": "ms",
                               "params": {"a_cpu": "s", "a_dsp": "s", "a_bus": "s"}}
    assert seconds["units"]["measured_column"] is None


def test_without_conversion_the_table_in_milliseconds_is_a_thousand_times_off(tmp_path,
                                                                             capsys):
    """What the units prevent: the same column without a unit is taken as seconds."""
    seconds = fitted(capsys, str(TUTORIAL / "measurements.csv"), "time_s")
    raw = fitted(capsys, rescaled(tmp_path, "time_ms", 1e3), "time_ms")
    assert raw["fitted"]["a_cpu"] > 500 * seconds["fitted"]["a_cpu"]


def test_an_incompatible_unit_exits_2_naming_both(tmp_path, capsys):
    table = rescaled(tmp_path, "time [J]", 1.0)
    assert main(["fit", *FILES, table, "--measured", "time", *OPTIONS]) == 2
    err = capsys.readouterr().err
    assert f"{table}:1:38: error: the measured column 'time [J]' is in 'J' and metric " \
           "'time' in 's'" in err
    assert err.splitlines()[2] == " " * 41 + "^"        # under the column's header
    assert "'J' does not convert to 's'" in err and "Traceback" not in err
    assert main(["fidelity", *FILES, rescaled(tmp_path, "t", 1.0), "--measured", "t",
                 "--measured-unit", "W", "--actor-column", "pe_{actor}"]) == 2
    assert "is in 'W' and metric 'time' in 's'" in capsys.readouterr().err
    assert main(["fidelity", *FILES, rescaled(tmp_path, "time [ms]", 1e3), "--measured",
                 "time", "--actor-column", "pe_{actor}", "--aggregate", "max"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("measured column 'time [ms]' read from ms into s: time in the "
                          ".moa's unit\nfidelity over 81 rows:")
    assert "MAPE           23.8 %" in out          # the tutorial's, in seconds
    # the header and the option disagree
    assert main(["fidelity", *FILES, rescaled(tmp_path, "time [ms]", 1e3), "--measured",
                 "time", "--measured-unit", "s", "--actor-column", "pe_{actor}"]) == 2
    assert "says 'ms' and --measured-unit says 's'" in capsys.readouterr().err


def test_a_fitted_moa_round_trips_its_units(tmp_path, capsys):
    out = tmp_path / "fitted.moa"
    table = rescaled(tmp_path, "time [ms]", 1e3)
    assert main(["fit", *FILES, table, "--measured", "time", *OPTIONS, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "measured column 'time [ms]' read from ms into s: time in the .moa's unit" in text
    assert "  a_cpu  4.9" in text and "e-09 s\n" in text
    (original,) = dsl.load_moa(FILES[1])
    (again,) = dsl.load_moa(out)
    assert again.units == original.units == {"a_cpu": "s", "a_dsp": "s", "a_bus": "s",
                                             "time": "s", "energy": "J"}
    assert again.params["a_cpu"] == pytest.approx(5e-9, rel=0.03)     # seconds, not ms
    assert dsl.format_moa(dsl.parse_moa(dsl.format_moa(again))) == dsl.format_moa(again)


def test_the_reader_scales_only_where_both_units_are_known(tmp_path):
    table = rescaled(tmp_path, "time [ms]", 1e3)
    plain = read_measurements(TUTORIAL / "measurements.csv", "time_s", actor_column="pe_{actor}",
                              actors=["grab", "filter", "merge", "encode"],
                              pes=["cpu[0]", "cpu[1]", "dsp"], metric_unit="s")
    kwargs = dict(actor_column="pe_{actor}", actors=["grab", "filter", "merge", "encode"],
                  pes=["cpu[0]", "cpu[1]", "dsp"])
    ms = read_measurements(table, "time", metric_unit="s", **kwargs)
    assert (ms.column, ms.column_unit, ms.unit) == ("time [ms]", "ms", "s")
    assert ms.measured == pytest.approx(plain.measured, rel=1e-12)
    unknown = read_measurements(table, "time [ms]", **kwargs)       # the metric's unit unknown
    assert unknown.unit == "ms" and unknown.measured == pytest.approx(plain.measured * 1e3)
    assert (plain.column_unit, plain.unit) == (None, None)
    with pytest.raises(InputError, match="no column 'tim'"):
        read_measurements(table, "tim", metric_unit="s", **kwargs)


def test_attribute_columns_leave_the_measured_value_alone(tmp_path):
    """A token attribute read per element is not the row's measured value."""
    path = tmp_path / "a.csv"
    path.write_text("quanta_gpu,gamma_gpu,time [ms]\n10,4,2.5\n")
    data = read_measurements(path, "time", quanta_column="quanta_{element}",
                             attribute_columns={"gamma": "gamma_{element}"},
                             elements=["gpu"], metric_unit="s")
    (row,) = data.rows
    assert row.measured == pytest.approx(2.5e-3)
    assert row.activity == {"gpu": (10.0, 1, (("gamma", 4.0),))}


def test_units_leave_no_cache_behind_that_a_removed_installation_breaks(tmp_path):
    """pint's shared disk cache keeps the absolute paths of the installation that wrote
    it: once that virtual environment was deleted, every later installation's
    conversion failed with 'No such file or directory: .../pint/default_en.txt/
    constants_en.txt' (seen in CI). The conversion runs in a fresh process with its
    own cache folder and writes nothing there."""
    import os
    import subprocess
    import sys
    cache = tmp_path / "cache"
    code = "from moa.units import scale; print(scale('ms', 's'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, XDG_CACHE_HOME=str(cache), HOME=str(tmp_path)),
                         check=True).stdout
    assert float(out) == pytest.approx(1e-3)
    assert not [p for p in cache.rglob("*") if p.is_file()]
