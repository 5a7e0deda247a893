"""One place for importers (issue 40, item 4): every format of ``mapeval import`` is an
:class:`~dsl.importers.Importer` in ``dsl/importers/``, listed once in the registry the
command line reads, documented in ``docs/reference/importers.md``, and written by the one
``-o`` rule (never over an input, only with its extension)."""
from __future__ import annotations

from pathlib import Path

import pytest

from dsl.importers import Importer
from mapping.cli.commands.import_ import IMPORT_FORMATS
from mapping.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def test_every_format_is_an_importer_documented_in_the_reference():
    page = (ROOT / "docs" / "reference" / "importers.md").read_text(encoding="utf-8")
    for fmt in IMPORT_FORMATS:
        importer = IMPORT_FORMATS.get(fmt)
        assert isinstance(importer, Importer)
        assert importer.convert.__module__ == f"dsl.importers.{fmt.replace('-', '_')}"
        assert f"\n## {fmt}\n" in page, fmt
        assert IMPORT_FORMATS.help(fmt)


def test_import_help_lists_the_registry(capsys):
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    out = capsys.readouterr().out
    assert all(fmt in out for fmt in IMPORT_FORMATS)


@pytest.mark.parametrize("fmt, name, text", [
    ("sdf3", "g.xml", (ROOT / "examples" / "sdf3_lookup" / "audio.xml").read_text()),
])
def test_output_never_over_an_input_nor_with_another_extension(fmt, name, text, tmp_path,
                                                               capsys):
    path = tmp_path / name
    path.write_text(text)
    assert main(["import", fmt, str(path), "-o", str(path)]) == 2
    assert path.read_text() == text
    assert main(["import", fmt, str(path), "-o", str(tmp_path / "g.moa")]) == 2
    err = capsys.readouterr().err
    assert "it is an input of this command" in err and "written to a .sdf file" in err
    assert main(["import", fmt, str(path), "-o", str(tmp_path / "sub" / "g.sdf")]) == 0
    assert (tmp_path / "sub" / "g.sdf").read_text().startswith("# Imported by")
