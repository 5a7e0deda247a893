"""``mapeval plot logca`` writes PNG and SVG through the plot dispatcher."""
import matplotlib.image as mpimg
import numpy as np

from mapping.cli.main import main

AES = ["--L", "1500", "--o", "2.9e4", "--C", "90", "--A", "19", "--latency", "independent"]


def test_plot_logca_png_and_svg(tmp_path):
    png, svg = tmp_path / "aes.png", tmp_path / "aes.svg"
    assert main(["plot", "logca", *AES, "-o", str(png)]) == 0
    assert main(["plot", "logca", *AES, "-o", str(svg)]) == 0
    image = mpimg.imread(png)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    assert np.ptp(image[..., :3]) > 0.5  # not blank
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_plot_logca_rejects_an_unknown_format(tmp_path, capsys):
    assert main(["plot", "logca", *AES, "-o", str(tmp_path / "aes.bmpx")]) == 2
    assert "Traceback" not in capsys.readouterr().err
