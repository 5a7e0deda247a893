"""Units of metrics and parameters in .moa files (issue 14): parsed, printed back, in the
JSON export, defaulted from the cost models' papers, and errors with positions."""
import json

import pytest

from dsl import parse_moa
from dsl.errors import ParseError
from dsl.json_export import to_json
from dsl.printer import format_moa

SRC = """moa a {
    param S = 1024 [unit = "B"]
    param k = S * 2 [unit = "B"]
    param j = 2 * S
    metric time [unit = "ms"]
    metric e2 = energy[sum] + time[max] [unit = "J"]
    pe p [time = lsla(alpha = S), energy = lsla(alpha = 1)]
}
"""


def test_units_of_parameters_and_metrics():
    arch = parse_moa(SRC)[0]
    assert arch.units == {"S": "B", "k": "B", "time": "ms", "e2": "J"}
    assert arch.unit("S") == "B" and arch.unit("j") is None and arch.unit("energy") is None
    assert arch.params["S"] == 1024 and str(arch.params["k"]) == "S * 2"
    assert str(arch.system_metrics["e2"].expr) == "energy[sum] + time[max]"
    assert arch.bind().units == arch.units


def test_units_round_trip_through_the_printer_and_json():
    arch = parse_moa(SRC)[0]
    text = format_moa(arch)
    assert 'param S = 1024 [unit = "B"]' in text and 'metric time [unit = "ms"]' in text
    assert 'metric e2 = energy[sum] + time[max] [unit = "J"]' in text
    back = parse_moa(text)[0]
    assert back.units == arch.units and format_moa(back) == text
    doc = json.loads(json.dumps(to_json(arch)))
    assert doc["units"] == {"S": "B", "k": "B", "time": "ms", "e2": "J"}


def test_a_file_without_units_parses_and_prints_as_before():
    plain = "moa a {\n    param S = 4\n    metric m = time[max]\n    pe p [time = lsla(alpha = S)]\n}\n"
    arch = parse_moa(plain)[0]
    assert arch.units == {} and "unit" not in format_moa(arch)
    assert format_moa(parse_moa(format_moa(arch))[0]) == format_moa(arch)


@pytest.mark.parametrize("models, unit", [
    ('pe p [time = roofline(peak = 1, bandwidth = 1)]\n cn m [time = bandwidth(B = 1)]', "s"),
    ('pe p [time = logca(A = 2)]\n cn b [time = lsla(alpha = 0)]', "cycles"),
    ('pe p [time = lsla(alpha = 1)]', None),
    ('pe p [time = logca(A = 2)]\n pe q [time = roofline(peak = 1, bandwidth = 1)]', None),
])
def test_default_unit_from_the_cost_models_paper(models, unit):
    arch = parse_moa(f"moa a {{\n {models}\n}}")[0]
    assert arch.unit("time") == unit and arch.bind().unit("time") == unit


def test_a_declared_unit_wins_over_the_papers():
    arch = parse_moa('moa a {\n metric time [unit = "ns"]\n pe p [time = logca(A = 2)]\n}')[0]
    assert arch.unit("time") == "ns"


@pytest.mark.parametrize("line, message, col", [
    ('param S = 1 [size = "B"]', "unknown attribute 'size'", 15),
    ('param S = 1 [unit = 3]', "unit must be a non-empty string", 15),
    ('metric time [unit = ""]', "unit must be a non-empty string", 15),
])
def test_bad_units_are_errors_with_positions(line, message, col):
    with pytest.raises(ParseError) as info:
        parse_moa(f"moa a {{\n {line}\n}}", "f.moa")
    assert message in str(info.value)
    assert info.value.origin[1:] == (2, col)


def test_a_unit_given_twice_is_an_error():
    with pytest.raises(ParseError, match="given twice"):
        parse_moa('moa a {\n metric time [unit = "s"]\n metric time [unit = "ms"]\n}')


def test_bad_unit_through_the_cli_exits_2_with_position(tmp_path, capsys):
    from mapping.cli.main import main
    moa = tmp_path / "a.moa"
    moa.write_text('moa a {\n param S = 1 [unit = 3]\n pe p [time = lsla(alpha = S)]\n}\n')
    assert main(["check", str(moa)]) == 2
    err = capsys.readouterr().err
    assert f"{moa}:2:" in err and "unit must be" in err and "Traceback" not in err


def test_eval_prints_the_declared_units(capsys):
    from mapping.cli.main import main
    from pathlib import Path
    odroid = Path(__file__).resolve().parent.parent / "examples" / "odroid"
    files = [str(odroid / n) for n in ("stereo.sdf", "odroid.moa", "mappings.map")]
    assert main(["eval", *files, "--mapping", "mixed"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.endswith(" s") and "iterations per s" in out and "value (s)" in out
    assert main(["eval", *files, "--mapping", "mixed", "--metric", "energy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unit"] == "J"


def test_a_mapped_analysis_prints_the_unit_of_time(tmp_path, capsys):
    from pathlib import Path
    from mapping.cli.main import main
    timing = Path(__file__).resolve().parent.parent / "examples" / "timing"
    moa = tmp_path / "duo.moa"
    moa.write_text((timing / "duo.moa").read_text().replace(
        "moa duo {", 'moa duo {\n    metric time [unit = "ms"]', 1))
    args = ["analyse", str(timing / "video.sdf"), str(moa), str(timing / "mappings.map"),
            "--mapping", "split"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "0.1 iterations per ms" in out and "period          10 ms" in out
    assert "makespan        18 ms" in out
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["time_unit"] == "ms"


def test_search_prints_the_units_of_its_objectives(capsys):
    from pathlib import Path
    from mapping.cli.main import main
    odroid = Path(__file__).resolve().parent.parent / "examples" / "odroid"
    files = [str(odroid / "stereo.sdf"), str(odroid / "odroid.moa")]
    assert main(["search", *files, "--strategy", "anneal", "--budget", "2000"]) == 0
    assert " s;" in capsys.readouterr().out.splitlines()[0]
    assert main(["search", *files, "--objectives", "time,energy", "--strategy", "nsga2",
                 "--budget", "2000"]) == 0
    out = capsys.readouterr().out
    assert "time (s)" in out and "energy (J)" in out
    assert main(["search", *files, "--objectives", "time,energy", "--strategy", "nsga2",
                 "--budget", "2000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["units"] == {"time": "s", "energy": "J"}


@pytest.mark.parametrize("value, text", [(357.7, "357.7 B"), (4096, "4 KiB"),
                                         (26621.1, "26 KiB"), (1.5 * 2 ** 20, "1.5 MiB"),
                                         (2 ** 25, "32 MiB"), (3 * 2 ** 40, "3 TiB")])
def test_sizes_in_binary_units(value, text):
    from moa.units import binary_size
    assert binary_size(value) == text


def test_a_size_typed_reads_as_it_is_written():
    from mapping.cli.commands.logca import granularity
    from moa.units import binary_size
    assert granularity("2K") == granularity("2KiB") == granularity("2kb") == 2048
    assert granularity("1TiB") == 2 ** 40
    for text in ("4 KiB", "1.5 MiB", "3 GiB", "2 TiB", "512 B"):
        assert binary_size(granularity(text.replace(" ", ""))) == text
