"""``mapeval sweep`` (SPEC §7): ranges, the grid, CSV rows equal to single evaluations."""
import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import dsl
from mapping import evaluate
from mapping.cli.main import main
from mapping.errors import MappingError
from mapping.evaluation.sweep import Range, grid, parse_range, sweep, to_csv

GABLES = Path(__file__).resolve().parent.parent / "examples" / "gables"
FIG8 = [str(GABLES / "fig8.sdf"), str(GABLES / "snapdragon835.moa"), str(GABLES / "fig8.map")]
TWO_IP = [str(GABLES / "two_ip.sdf"), str(GABLES / "two_ip.moa"), str(GABLES / "two_ip.map")]


def test_parse_range():
    assert parse_range("f=0:1:9") == Range("f", 0.0, 1.0, 9, False)
    assert parse_range(" I = 1:1024:11:log") == Range("I", 1.0, 1024.0, 11, True)
    assert parse_range("f=0:1:9").values() == [0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1]
    values = parse_range("I=1:1024:11:log").values()
    assert values == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert all(isinstance(v, int) for v in values)  # whole numbers stay integers
    assert parse_range("x=0.5:0.5:1").values() == [0.5]
    assert parse_range("S=1_000:3_000:3").values() == [1000, 2000, 3000]


@pytest.mark.parametrize("text, needle", [
    ("f", "NAME=START:STOP:N"), ("f=0:1", "NAME=START:STOP:N"), ("f=a:1:3", "numbers"),
    ("f=0:1:x", "whole number"), ("f=0:1:0", "whole number >= 1"), ("f=0:1:3:lin", "NAME=START"),
    ("I=0:10:3:log", "positive"), ("1f=0:1:2", "NAME="),
])
def test_parse_range_errors(text, needle):
    with pytest.raises(MappingError, match=needle):
        parse_range(text)


def test_grid_is_the_product_first_slowest():
    points = grid([parse_range("a=1:2:2"), parse_range("b=10:30:3")])
    assert points == [{"a": 1, "b": 10}, {"a": 1, "b": 20}, {"a": 1, "b": 30},
                      {"a": 2, "b": 10}, {"a": 2, "b": 20}, {"a": 2, "b": 30}]
    with pytest.raises(MappingError, match="swept twice"):
        grid([parse_range("a=1:2:2"), parse_range("a=1:3:2")])


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_cli_rows_equal_single_evaluations(tmp_path, capsys):
    out = tmp_path / "fig8.csv"
    assert main(["sweep", *FIG8, "--param", "f=0:1:5", "--param", "I=1:64:4:log",
                 "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    rows = read_csv(out.read_text())
    assert len(rows) == 5 * 4
    header = next(csv.reader(io.StringIO(out.read_text())))
    assert header == ["f", "I", "value", "throughput", "performance",
                      "cpu", "gpu", "dsp", "dsp_fabric", "dram"]
    app = dsl.load_sdf(FIG8[0])[0]
    arch = dsl.load_moa(FIG8[1])[0]
    mapping = dsl.load_map(FIG8[2])[0]
    for row in rows:
        params = {"f": float(row["f"]), "I": float(row["I"])}
        ev = evaluate(app, arch, mapping, params=params)
        assert float(row["value"]) == pytest.approx(ev.value, rel=1e-12)
        assert float(row["performance"]) == pytest.approx(ev.performance, rel=1e-12)
        for e in ev.elements:
            assert float(row[e.name]) == pytest.approx(e.value, rel=1e-12, abs=0)


def test_fig8_shape(capsys):
    # Gables Fig. 8: with f = 1 everything is on the GPU; at I = 1024 it is compute bound
    # (349.6), i.e. 46.6x the CPU alone at I = 1 (7.5); at I = 1 the GPU is limited by its
    # 24 GB/s.  For f < 1 the CPU's 7.5/(1 - f) limits every intensity alike.
    assert main(["sweep", *FIG8, "--param", "f=0:1:9", "--param", "I=1:1024:11:log"]) == 0
    rows = read_csv(capsys.readouterr().out)
    perf = {(float(r["f"]), float(r["I"])): float(r["performance"]) for r in rows}
    assert perf[(0.0, 1.0)] == pytest.approx(7.5)
    assert perf[(1.0, 1024.0)] / perf[(0.0, 1.0)] == pytest.approx(349.6 / 7.5)
    assert perf[(1.0, 1.0)] == pytest.approx(24.0)
    assert perf[(0.5, 1024.0)] == pytest.approx(15.0) == perf[(0.5, 64.0)]


def test_sweep_function_and_fixed_parameters():
    app = dsl.load_sdf(TWO_IP[0])[0]
    arch = dsl.load_moa(TWO_IP[1])[0]
    mapping = dsl.load_map(TWO_IP[2])[0]
    result = sweep(app, arch, mapping, [parse_range("Bpeak=10:30:3")], params={"f": 0.75},
                   aggregate="max")
    # Fig. 6b and 6c: performance 1.3278 at Bpeak = 10, 2.0 at 30
    assert [r["Bpeak"] for r in result.rows] == [10, 20, 30]
    assert result.rows[0]["performance"] == pytest.approx(1.3278, abs=1e-3)
    assert result.rows[2]["performance"] == pytest.approx(2.0)
    text = to_csv(result)
    assert text.splitlines()[0] == "Bpeak,value,throughput,performance,cpu,gpu,dram"
    with pytest.raises(MappingError, match="both swept and fixed"):
        sweep(app, arch, mapping, [parse_range("f=0:1:2")], params={"f": 0.5})
    with pytest.raises(MappingError, match="unknown parameter"):
        sweep(app, arch, mapping, [parse_range("nope=0:1:2")])


def test_other_metric_has_no_performance_columns():
    odroid = Path(__file__).resolve().parents[1] / "examples" / "odroid"
    app = dsl.load_sdf(odroid / "stereo.sdf")[0]
    arch = dsl.load_moa(odroid / "odroid.moa")[0]
    mapping = [m for m in dsl.load_map(odroid / "mappings.map") if m.name == "mixed"][0]
    result = sweep(app, arch, mapping, [parse_range("f=0.5:1:2")], metric="energy")
    assert result.columns[:2] == ("f", "value")
    assert not any("performance" in c or "throughput" in c for c in result.columns)


def test_metric_no_element_models_is_an_error():
    app = dsl.load_sdf(TWO_IP[0])[0]
    arch = dsl.load_moa(TWO_IP[1])[0]
    mapping = dsl.load_map(TWO_IP[2])[0]
    with pytest.raises(MappingError, match="unknown metric 'energy'.*known metrics: time"):
        sweep(app, arch, mapping, [parse_range("f=0:1:2")], metric="energy")


def test_cli_errors(tmp_path, capsys):
    assert main(["sweep", *TWO_IP, "--param", "f=0:1"]) == 2
    assert "NAME=START:STOP:N" in capsys.readouterr().err
    assert main(["sweep", *TWO_IP, "--param", "f=0:1:3", "-p", "f=0.5"]) == 2
    assert "both swept and fixed" in capsys.readouterr().err
    # never over an input
    assert main(["sweep", *TWO_IP, "--param", "f=0:1:3", "-o", TWO_IP[0]]) == 2
    assert "input" in capsys.readouterr().err
    assert main(["sweep", *TWO_IP, "--param", "f=0:1:3", "--plot", str(tmp_path / "x.gif")]) == 2
    assert ".png" in capsys.readouterr().err


def test_cli_plot(tmp_path):
    import matplotlib.image as mpimg
    png = tmp_path / "fig8.png"
    assert main(["sweep", *FIG8, "--param", "f=0:1:9", "--param", "I=1:1024:6:log",
                 "-o", str(tmp_path / "fig8.csv"), "--plot", str(png), "--y", "performance",
                 "--normalize", "--logy"]) == 0
    image = mpimg.imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 300
    assert image[..., :3].std() > 0.05


ODROID = Path(__file__).resolve().parents[1] / "examples" / "odroid"


@settings(max_examples=25, deadline=None)
@given(f=st.tuples(st.floats(0.25, 4.0), st.floats(0.25, 4.0), st.integers(1, 5)),
       d=st.tuples(st.integers(1, 200), st.integers(1, 50), st.integers(1, 4)),
       slow=st.sampled_from(["D", "f"]))
def test_a_sweep_equals_its_points_bound_alone(f, d, slow):
    """Points share the bindings of the file whose parameters they leave alone, and
    bound architectures share routes: every point still equals its own evaluation,
    bound from scratch (a grid over a .moa and a .sdf parameter, in any order)."""
    from mapping.semantics.problem import bind_problem
    from mapping.evaluation.sweep import iter_sweep

    app = dsl.load_sdf(ODROID / "stereo.sdf")[0]
    arch = dsl.load_moa(ODROID / "odroid.moa")[0]
    mapping = next(m for m in dsl.load_map(ODROID / "mappings.map") if m.name == "mixed")
    ranges = [Range("D", d[0], d[0] + d[1] * (d[2] - 1), d[2]), Range("f", *f)]
    if slow == "f":
        ranges.reverse()
    for point, ev in iter_sweep(app, arch, mapping, ranges, aggregate="max"):
        fresh = bind_problem(dsl.load_sdf(ODROID / "stereo.sdf")[0],
                             dsl.load_moa(ODROID / "odroid.moa")[0], point)
        alone = evaluate(fresh.app, fresh.arch, mapping, "time", "max", problem=fresh)
        assert ev.value == alone.value and ev.bottleneck == alone.bottleneck
