"""Kim & Edwards' figures (issue 16, must-show 4): the computation/communication
breakdown per run and per function, and the producer-consumer heat map."""
from pathlib import Path

import pytest

import dsl
from mapping.cli.main import main
from mapping.plots.profile import run_fractions, transfer_matrix
from moc.breakdown import breakdown

STORE = Path(__file__).resolve().parents[1] / "examples" / "accelerator_store"


def decoder():
    graph, = dsl.load_sdf(STORE / "decoder.sdf")
    return breakdown(graph.bind())


def test_breakdown_of_the_example_decoder():
    b = decoder()
    assert b.computation == 462_000                    # README: by hand
    assert b.local + b.global_ == 504_176
    idct = next(f for f in b.functions if f.name == "idct_block")
    assert (idct.ops, idct.local, idct.global_in, idct.global_out) == \
        (200_000, 196_864, 65_536, 65_536)
    assert b.by_load()[0].name == "idct_block"
    comp, local, glob = run_fractions(b)
    assert comp == pytest.approx(462_000 / 966_176)
    assert comp + local + glob == pytest.approx(1.0)


def test_transfer_matrix_sorted_by_computation():
    order, M = transfer_matrix(decoder())
    assert order[0] == "idct_block"
    i = order.index("idct_block")
    assert M[i, i] == 196_864                           # local traffic on the diagonal
    assert M[order.index("huffman_decode"), i] == 65_536
    assert M.sum() == 504_176


def test_plots_render(tmp_path, capsys):
    out = tmp_path / "breakdown.png"
    assert main(["plot", "breakdown", str(STORE / "decoder.sdf"),
                 str(STORE / "profile"), "--inclusive", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    heat = tmp_path / "heat.svg"
    assert main(["plot", "heatmap", str(STORE / "profile_csv"), "-o", str(heat)]) == 0
    assert b"<svg" in heat.read_bytes()[:400]
    assert main(["plot", "heatmap", str(STORE / "decoder.sdf"), str(STORE / "decoder.sdf"),
                 "-o", str(tmp_path / "two.png")]) == 2
    assert "one run" in capsys.readouterr().err
