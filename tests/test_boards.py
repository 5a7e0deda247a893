"""The built-in boards: every figure has a source, every board checks and evaluates, and
a board's name stands for its .moa file on the command line."""
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from mapping.cli.main import main
from moa import boards

ROOT = Path(__file__).resolve().parent.parent
STEREO = ROOT / "examples" / "odroid" / "stereo.sdf"
NUMBER = re.compile(r"(?<![\w.])(\d+\.?\d*(?:[eE][-+]?\d+)?)")


def code_and_comment(line: str) -> tuple[str, str]:
    """The code of a ``.moa`` line without its strings, and its comment."""
    code, _, comment = re.sub(r'"[^"]*"', '""', line).partition("#")
    return code, comment


@pytest.mark.parametrize("name", boards.names())
def test_every_number_has_a_source_or_is_marked_to_fit(name):
    board = boards.board(name)
    assert board.kind and board.about and board.sources
    body = False
    for number, line in enumerate(board.path.read_text().splitlines(), 1):
        body = body or line.lstrip().startswith("moa ")
        code, comment = code_and_comment(line)
        if not body or not NUMBER.search(code):
            continue
        keys = set(re.findall(r"\[([A-Za-z0-9_.-]+)\]", comment))
        fit = comment.strip().startswith("fit:")
        where = f"{board.path.name}:{number}: {line.strip()}"
        assert fit or keys, f"a number without a source or 'fit:' mark: {where}"
        assert keys <= set(board.sources), f"unknown source {keys - set(board.sources)}: {where}"
        if fit:
            # a parameter to fit starts where it changes nothing: 0 if additive, 1 if a factor
            m = re.fullmatch(r"\s*param\s+\w+\s*=\s*(\S+)\s*(\[.*\])?\s*", code)
            assert m and float(m.group(1)) in (0.0, 1.0), where


@pytest.mark.parametrize("name", boards.names())
def test_every_fit_mark_names_a_parameter_in_use(name):
    text = boards.board(name).path.read_text()
    fitted = re.findall(r"param\s+(\w+)\s*=[^#\n]*#\s*fit:", text)
    assert fitted
    for param in fitted:
        uses = re.findall(rf"(?<![\w.]){param}(?!\w)", text.split("{", 1)[1])
        assert len(uses) >= 2, f"{name}: '{param}' is declared but never used"


def check_json(capsys, name):
    assert main(["check", name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["files"]


@pytest.mark.parametrize("name", boards.names())
def test_each_board_checks_and_evaluates_stereo(capsys, name):
    (entry,) = check_json(capsys, name)
    assert entry["kind"] == "moa" and entry["warnings"] == []
    pes = entry["pes"]
    actors = ["read", "rgb2gray", "census", "cost", "aggregate", "disparity", "median",
              "write"]
    inline = ",".join(f"{a}={pes[0] if i % 2 else pes[-1]}" for i, a in enumerate(actors))
    assert main(["eval", str(STEREO), name, "--map", inline, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert 0 < result["value"] < float("inf")


def test_h100_host_against_a_hand_computation(tmp_path, capsys):
    """cpu: max(1.1e6 FLOP / (96 * 2.4e9 FLOP/s), 2.5e5 B / 460.8e9 B/s); gpu:
    max(4e6 / 51e12, 5e5 B / 2.0e12 B/s); PCIe: (4096 + 1024) B / 63e9 B/s; DDR5 and HBM
    count the same bytes at their bandwidths; the sum (aggregate = sum)."""
    app = tmp_path / "pipe.sdf"
    app.write_text("sdf pipe {\n actor src [quanta = 1e6, intensity = 4]\n"
                   " actor work [quanta = 4e6, intensity = 8]\n actor sink [quanta = 1e5]\n"
                   " src -> work [size = 4096]\n work -> sink [size = 1024]\n}\n")
    assert main(["eval", str(app), "h100-pcie-host", "--map", "src=cpu,work=gpu,sink=cpu",
                 "--json"]) == 0
    value = json.loads(capsys.readouterr().out)["value"]
    cpu = max(1.1e6 / (96 * 2.4e9), 2.5e5 / 460.8e9)
    gpu = max(4e6 / 51e12, 5e5 / 2.0e12)
    pcie = (4096 + 1024) / 63.0e9
    assert value == pytest.approx(cpu + gpu + pcie + 2.5e5 / 460.8e9 + 5e5 / 2.0e12,
                                  rel=1e-12)


def test_snapdragon_board_gives_gables_cpu_roofline(tmp_path, capsys):
    """Gables Fig. 7a: the CPU attains min(7.5 GFLOP/s, 15.1 GB/s * I); at I = 0.25 that
    is 3.775 GFLOP/s (the DRAM at 30 GB/s is not the bound)."""
    app = tmp_path / "k.sdf"
    app.write_text("sdf k {\n actor k [ops = 1e9, intensity = 0.25]\n}\n")
    assert main(["eval", str(app), "snapdragon835-gables", "--map", "k=cpu", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)["value"]
    assert 1e9 / value == pytest.approx(15.1e9 * 0.25, rel=1e-12)


def test_platforms_lists_at_least_six_boards_of_different_kinds(capsys):
    assert main(["platforms"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 6
    assert [line.split()[0] for line in lines] == boards.names()
    assert len({b.kind for b in boards.boards()}) >= 6
    assert main(["platforms", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["name"] for e in listed} == set(boards.names())


def test_platforms_name_prints_the_moa_text(capsys):
    assert main(["platforms", "rpi5"]) == 0
    assert capsys.readouterr().out == boards.board("rpi5").path.read_text()


def test_unknown_board_is_exit_2_listing_the_boards(capsys):
    assert main(["platforms", "odroid-xu5"]) == 2
    err = capsys.readouterr().err
    assert "no built-in board named 'odroid-xu5'" in err and "odroid-xu4" in err


def test_a_file_of_the_board_name_in_the_working_directory_wins(tmp_path, monkeypatch,
                                                              capsys):
    text = boards.board("rpi5").path.read_text().replace("f_A76 = 2.4e9", "f_A76 = 1.2e9")
    monkeypatch.chdir(tmp_path)
    app = tmp_path / "a.sdf"
    app.write_text("sdf a {\n actor x [quanta = 2.4e9]\n}\n")

    def value():
        assert main(["eval", str(app), "rpi5", "--map", "x=core[0]", "--json"]) == 0
        return json.loads(capsys.readouterr().out)["value"]

    assert value() == pytest.approx(1.0)          # 2.4e9 operations at 2.4e9 per second
    (tmp_path / "rpi5").write_text(text)
    assert value() == pytest.approx(2.0)          # the local file's 1.2 GHz
    assert check_json(capsys, "rpi5")[0]["file"] == "rpi5"
