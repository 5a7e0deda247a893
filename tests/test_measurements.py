"""Measurement CSVs: every bad case is exit status 2 with a message naming row and
column; --skip-bad-rows counts; per-element activity without an .sdf."""
from __future__ import annotations

import json

import pytest

from mapping.cli.main import main
from mapping.errors import InputError
from mapping.calibration.assessment import assess
from mapping.calibration.measurements import read_measurements
from moa import Architecture, CostSpec

from duo_problem import ARCH as DUO_ARCH, write_inputs

#: the duo architecture with an offset on p0
ARCH = DUO_ARCH.replace("lsla(alpha = 1)", "lsla(alpha = 1, beta = 0.5)")
MAPS = """
mapping both_p0 { a -> p0; b -> p0 }
mapping split { a -> p0; b -> p1 }
"""


@pytest.fixture
def files(tmp_path):
    out = write_inputs(tmp_path, ARCH, MAPS)
    out["dir"] = tmp_path
    return out


def write(files, text, name="data.csv"):
    path = files["dir"] / name
    path.write_text(text)
    return str(path)


def fails(capsys, *argv):
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert captured.out == ""
    return captured.err


def by_name(files, csv, *extra):
    return ["fidelity", files["sdf"], files["moa"], files["map"], csv, "--measured", "t",
            "--mapping-column", "mapping", *extra]


def by_actor(files, csv, *extra):
    return ["fidelity", files["sdf"], files["moa"], csv, "--measured", "t",
            "--actor-column", "t_{actor}", *extra]


GOOD = "mapping,n,t\nboth_p0,1,3\nsplit,2,9\nboth_p0,3,6\n"


def test_good_table(files, capsys):
    assert main(by_name(files, write(files, GOOD)) + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3


def test_missing_measured_column(files, capsys):
    csv = write(files, "mapping,n,time\nboth_p0,1,3\n")
    err = fails(capsys, *by_name(files, csv))
    assert f"{csv}:1:1: error:" in err and "no column 't'" in err and "time" in err


def test_missing_mapping_column(files, capsys):
    csv = write(files, "map,n,t\nboth_p0,1,3\n")
    err = fails(capsys, *by_name(files, csv))
    assert "no column 'mapping'" in err and "--mapping-column" in err


def test_missing_actor_column(files, capsys):
    csv = write(files, "t_a,n,t\np0,1,3\n")
    err = fails(capsys, *by_actor(files, csv))
    assert "no column 't_b'" in err and "actor 'b'" in err


def test_non_numeric_cell(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,1,3\nsplit,two,9\n")
    err = fails(capsys, *by_name(files, csv))
    # Line 3, the cell 'two' starts at character 7; the message names row and column.
    assert f"{csv}:3:7: error: row 2, column 2 'n': 'two' is not a (finite) number" in err
    assert "split,two,9" in err                        # the source line is shown


def test_non_numeric_measured(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,1,fast\n")
    err = fails(capsys, *by_name(files, csv))
    assert "row 1, column 3 't'" in err and "'fast'" in err


def test_missing_cell(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,,3\n")
    err = fails(capsys, *by_name(files, csv))
    assert "row 1, column 2 'n': missing cell" in err
    csv = write(files, "mapping,n,t\nboth_p0,1\n", "short.csv")
    err = fails(capsys, *by_name(files, csv))
    assert "row 1, column 3 't': missing cell" in err


def test_too_many_cells(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,1,3,4\n")
    err = fails(capsys, *by_name(files, csv))
    assert "row 1: 4 cells" in err


def test_unknown_pe(files, capsys):
    csv = write(files, "t_a,t_b,n,t\np0,p0,1,3\np0,gpu,1,4\n")
    err = fails(capsys, *by_actor(files, csv))
    assert f"{csv}:3:4: error: row 2, column 2 't_b': 'gpu' is an unknown PE" in err
    assert "p0, p1" in err


def test_cn_is_not_a_pe(files, capsys):
    csv = write(files, "t_a,t_b,n,t\np0,bus,1,3\n")
    err = fails(capsys, *by_actor(files, csv))
    assert "'bus' is a communication node, not a PE" in err


def test_unknown_mapping_name(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,1,3\nall_gpu,1,3\n")
    err = fails(capsys, *by_name(files, csv))
    assert "row 2, column 1 'mapping': no mapping named 'all_gpu'" in err
    assert "both_p0, split" in err


def test_empty_file(files, capsys):
    csv = write(files, "")
    err = fails(capsys, *by_name(files, csv))
    assert "empty file" in err
    csv = write(files, "\n# only a comment\n\n", "comment.csv")
    assert "empty file" in fails(capsys, *by_name(files, csv))


def test_header_only(files, capsys):
    csv = write(files, "mapping,n,t\n")
    assert "no data rows" in fails(capsys, *by_name(files, csv))


def test_duplicate_header(files, capsys):
    csv = write(files, "mapping,n,n,t\nboth_p0,1,1,3\n")
    assert "column 'n' appears twice" in fails(capsys, *by_name(files, csv))


def test_mapping_column_needs_map_file(files, capsys):
    csv = write(files, GOOD)
    err = fails(capsys, "fidelity", files["sdf"], files["moa"], csv, "--measured", "t",
                "--mapping-column", "mapping")
    assert "needs a .map file" in err


def test_no_mapping_source(files, capsys):
    csv = write(files, "n,t\n1,3\n")
    err = fails(capsys, "fidelity", files["sdf"], files["moa"], csv, "--measured", "t")
    assert "mapping" in err


def test_several_mappings_need_a_choice(files, capsys):
    csv = write(files, "n,t\n1,3\n2,4\n")
    err = fails(capsys, "fidelity", files["sdf"], files["moa"], files["map"], csv,
                "--measured", "t")
    assert "--mapping" in err and "both_p0" in err
    assert main(["fidelity", files["sdf"], files["moa"], files["map"], csv, "--measured",
                 "t", "--mapping", "both_p0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fidelity"] == 1.0


def test_bad_template(files, capsys):
    csv = write(files, GOOD)
    err = fails(capsys, "fidelity", files["sdf"], files["moa"], csv, "--measured", "t",
                "--actor-column", "t_actor")
    assert "{actor}" in err


def test_skip_bad_rows(files, capsys):
    csv = write(files, "mapping,n,t\nboth_p0,1,3\nsplit,x,9\nboth_p0,3,6\nnone,1,1\n"
                "split,2,\nsplit,1,8\n")
    assert main(by_name(files, csv, "--skip-bad-rows", "--json")) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["skipped"] == 3 and doc["n"] == 3
    assert "skipped 3 bad rows" in captured.err
    assert ":3:" in captured.err and "'x' is not a (finite) number" in captured.err
    # Without the option the first bad row stops the command.
    assert "row 2, column 2 'n'" in fails(capsys, *by_name(files, csv))


def test_rows_skipped_as_read_and_as_evaluated_are_listed_alike(files, capsys):
    """Both kinds of skipped row read ``FILE:LINE:COL: MESSAGE``
    (:func:`dsl.diagnostics.format_located`); a row that failed to evaluate read
    ``FILE:LINE: MESSAGE`` before, without the column its message names."""
    csv = write(files, "mapping,n,t\nboth_p0,1,3\nsplit,x,9\nboth_p0,-1,6\nsplit,2,9\n")
    assert main(by_name(files, csv, "--skip-bad-rows", "--json")) == 0
    err = capsys.readouterr().err
    assert "skipped 2 bad rows" in err
    assert f"\n  {csv}:3:7: row 2, column 2 'n': 'x' is not a (finite) number\n" in err
    assert f"\n  {csv}:4:9: row 3, column 2 'n': " in err


def test_a_row_error_without_a_column_names_the_row(files):
    """At the row, not a cell: ``row 1: ...`` at ``FILE:LINE:1``, the line said once, by
    the position, as at a cell (rows already read said ``row 1 (line 2): ...`` there,
    rows being read ``row 1: ...``); a row built without a file names its line."""
    from mapping.calibration.measurements import MeasurementRow

    csv = write(files, "n,t\n1,3\n")
    exc = read_measurements(csv, "t", params=["n"]).rows[0].error("bad row")
    assert str(exc) == "row 1: bad row" and exc.origin == (csv, 2, 1)
    exc = MeasurementRow(2, 1, {}, 3.0).error("bad row")
    assert str(exc) == "row 1 (line 2): bad row" and exc.origin is None


def test_skip_bad_rows_when_all_are_bad(files, capsys):
    csv = write(files, "mapping,n,t\nsplit,x,9\n")
    assert "every data row is bad" in fails(capsys, *by_name(files, csv, "--skip-bad-rows"))


def test_semicolons_bom_comments_and_quotes(files, capsys):
    csv = write(files, '\ufeff# exported by a spreadsheet\nmapping; n; t\n"both_p0"; 1; 3\n'
                "\n# a comment row\nsplit; 2; 9\n")
    assert main(by_name(files, csv, "--json")) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 2


def test_cli_parameter_under_row_parameter(files, capsys):
    # -p sets parameters the CSV does not; a column overrides -p for its row.
    csv = write(files, "mapping,t\nboth_p0,3\nsplit,9\n")
    assert main(by_name(files, csv, "-p", "n=2", "--json")) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 2


# --------------------------------------------------------------------------- activity

def element_arch():
    arch = Architecture("flat")
    arch.add_pe("p0", costs={"time": CostSpec("lsla", {"alpha": 1.0, "beta": 0.5})})
    arch.add_pe("p1", costs={"time": CostSpec("lsla", {"alpha": 3.0})})
    arch.add_cn("bus", costs={"time": CostSpec("lsla", {"alpha": 0.25})})
    arch.add_link("p0", "bus")
    arch.add_link("p1", "bus")
    return arch


def test_per_element_activity_api(files):
    csv = write(files, "quanta_p0,tokens_p0,quanta_p1,tokens_p1,quanta_bus,tokens_bus,t\n"
                       "10,2,0,0,4,1,12\n6,3,2,1,0,0,13\n")
    arch = element_arch()
    data = read_measurements(csv, "t", quanta_column="quanta_{element}",
                             tokens_column="tokens_{element}", elements=list(arch.elements))
    assert data.rows[0].activity == {"p0": (10.0, 2), "p1": (0.0, 0), "bus": (4.0, 1)}
    a = assess(arch, data.rows)
    # row 1: p0 1·10 + 0.5·2 = 11, bus 0.25·4 = 1 -> 12;  row 2: 6 + 1.5 + 3·2 = 13.5
    assert list(a.predicted) == pytest.approx([12.0, 13.5])


def test_per_element_activity_cli_without_sdf(files, capsys):
    csv = write(files, "quanta_p0,tokens_p0,quanta_p1,tokens_p1,t\n10,2,0,0,11\n"
                       "6,3,2,1,13.5\n1,1,1,1,4.5\n")
    assert main(["fidelity", files["moa"], csv, "--measured", "t", "--quanta-column",
                 "quanta_{element}", "--tokens-column", "tokens_{element}", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mape"] == pytest.approx(0.0, abs=1e-12) and doc["tau"] == pytest.approx(1.0)
    # Without --tokens-column every element gets one token of all its quanta.
    assert main(["fidelity", files["moa"], csv, "--measured", "t", "--quanta-column",
                 "quanta_{element}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3


def test_per_element_activity_errors(files, capsys):
    base = ["fidelity", files["moa"], None, "--measured", "t", "--quanta-column",
            "quanta_{element}", "--tokens-column", "tokens_{element}"]

    def run(text, name):
        argv = list(base)
        argv[2] = write(files, text, name)
        return fails(capsys, *argv)

    assert "no column matches --quanta-column" in run("q_p0,t\n1,2\n", "a.csv")
    assert "no column 'tokens_p0'" in run("quanta_p0,t\n1,2\n", "b.csv")
    assert "non-negative integer, got 1.5" in run("quanta_p0,tokens_p0,t\n1,1.5,2\n", "c.csv")
    assert "quanta must be non-negative" in run("quanta_p0,tokens_p0,t\n-1,1,2\n", "d.csv")
    assert "in 0 tokens" in run("quanta_p0,tokens_p0,t\n3,0,2\n", "e.csv")


def test_read_measurements_error_origin(files):
    csv = write(files, "mapping,n,t\nboth_p0,1,3\nsplit,2,oops\n")
    with pytest.raises(InputError) as info:
        read_measurements(csv, "t", params=["n"], mapping_column="mapping",
                          mappings=[])
    assert "a .map file is needed" in str(info.value)
    from dsl.mappings import Mapping
    maps = [Mapping("both_p0", {"a": "p0", "b": "p0"}), Mapping("split", {"a": "p0", "b": "p1"})]
    with pytest.raises(InputError) as info:
        read_measurements(csv, "t", params=["n"], mapping_column="mapping", mappings=maps)
    assert info.value.origin == (csv, 3, 9)
    assert "row 2, column 3 't'" in str(info.value)
