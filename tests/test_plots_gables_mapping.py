"""``mapeval plot gables`` and ``mapeval plot mapping``: files written by the CLI, and the
numbers behind the Gables plot."""
import math
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

import dsl
from mapping.cli.main import main
from mapping.plots.gables import gables_data

GABLES = Path(__file__).resolve().parent.parent / "examples" / "gables"
TWO_IP = [str(GABLES / "two_ip.sdf"), str(GABLES / "two_ip.moa"), str(GABLES / "two_ip.map")]


def assert_png(path, width, height):
    image = mpimg.imread(path)
    assert image.shape[:2] == (height, width)
    rgb = image[..., :3]
    assert rgb.std() > 0.05                       # not blank
    colours = np.unique((rgb.reshape(-1, 3) * 255).astype(int), axis=0)
    assert len(colours) > 20                      # lines, text, marks


@pytest.mark.parametrize("kind, size", [("gables", (750, 520)), ("mapping", (600, 450))])
def test_png_and_svg_through_the_cli(tmp_path, kind, size):
    png, svg = tmp_path / f"{kind}.png", tmp_path / f"{kind}.svg"
    assert main(["plot", kind, *TWO_IP, "-p", "f=0.75", "-o", str(png)]) == 0
    assert_png(png, *size)
    assert main(["plot", kind, "-p", "f=0.75", *TWO_IP, "-o", str(svg)]) == 0
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    pdf = tmp_path / f"{kind}.pdf"
    assert main(["plot", kind, *TWO_IP, "-o", str(pdf)]) == 0
    assert pdf.read_bytes().startswith(b"%PDF")


def test_gables_plot_numbers_of_figure_6b():
    app = dsl.load_sdf(TWO_IP[0])[0]
    arch = dsl.load_moa(TWO_IP[1])[0]
    mapping = dsl.load_map(TWO_IP[2])[0]
    data = gables_data(app, arch, mapping, {"f": 0.75})
    roofs = {r.name: r for r in data.roofs}
    assert set(roofs) == {"cpu", "gpu", "dram"}
    # IP[0]: min(6·I, 40)/0.25 at I0 = 8 -> 160; IP[1]: min(15·I, 200)/0.75 at 0.1 -> 2
    assert roofs["cpu"].f == pytest.approx(0.25) and roofs["cpu"].intensity == pytest.approx(8)
    assert roofs["cpu"].selected == pytest.approx(160)
    assert roofs["gpu"].f == pytest.approx(0.75) and roofs["gpu"].intensity == pytest.approx(0.1)
    assert roofs["gpu"].selected == pytest.approx(2.0)
    # memory: 10·I at I_avg = 1/(0.25/8 + 0.75/0.1) = 0.13278 -> 1.3278 (eq. 7)
    assert roofs["dram"].intensity == pytest.approx(0.132780, rel=1e-4)
    assert roofs["dram"].selected == pytest.approx(1.3278, rel=1e-4)
    assert data.evaluation.performance == pytest.approx(min(r.selected for r in data.roofs))


def test_gables_plot_omits_an_idle_ip():
    app = dsl.load_sdf(TWO_IP[0])[0]
    arch = dsl.load_moa(TWO_IP[1])[0]
    mapping = dsl.load_map(TWO_IP[2])[0]
    roofs = {r.name: r for r in gables_data(app, arch, mapping).roofs}  # Fig. 6a, f = 0
    assert set(roofs) == {"cpu", "dram"}
    assert math.isclose(roofs["dram"].selected, 80.0)


def test_errors(tmp_path, capsys):
    assert main(["plot", "gables", *TWO_IP, "-o", str(tmp_path / "x.jpg")]) == 2
    assert ".png, .svg or .pdf" in capsys.readouterr().err
    assert not (tmp_path / "x.jpg").exists()
    # never over an input
    assert main(["plot", "mapping", *TWO_IP, "-o", TWO_IP[0].replace(".sdf", ".png"),
                 "--map", "work0=cpu"]) == 2
    capsys.readouterr()
    # an architecture without roofline PEs has no Gables plot
    lsla = lsla_files(tmp_path)
    assert main(["plot", "gables", *lsla, "-o", str(tmp_path / "o.png")]) == 2
    assert "roofline" in capsys.readouterr().err


def lsla_files(tmp_path):
    (tmp_path / "app.sdf").write_text(
        "sdf pipe {\n  actor a [quanta = 100]\n  actor b [quanta = 50]\n"
        "  a -> b [size = 4]\n}\n")
    (tmp_path / "arch.moa").write_text(
        "moa board {\n  pe p0 [time = lsla(alpha = 2)]\n  pe p1 [time = lsla(alpha = 1)]\n"
        "  cn bus [time = lsla(alpha = 0.5)]\n  p0 -- bus\n  p1 -- bus\n}\n")
    (tmp_path / "one.map").write_text("mapping split { a -> p0; b -> p1 }\n")
    return [str(tmp_path / n) for n in ("app.sdf", "arch.moa", "one.map")]


def test_mapping_plot_of_lsla_example(tmp_path):
    out = tmp_path / "load.png"
    assert main(["plot", "mapping", *lsla_files(tmp_path), "--aggregate", "max",
                 "-o", str(out)]) == 0
    image = mpimg.imread(out)
    assert image[..., :3].std() > 0.05
