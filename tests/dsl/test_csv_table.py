"""The CSV table reader shared by the profile, roofline-kernel and GPU-table imports."""
from __future__ import annotations

import pytest

from dsl.csv_table import csv_rows
from dsl.errors import ParseError


def test_rows_carry_their_line_and_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# kernels\nName,Flops\n\nk1, 10\n# skipped\nk2,20\n")
    rows = list(csv_rows(path, ("name", "flops")))
    # "k1," takes columns 1-3: the second cell starts at column 4
    assert rows == [(4, {"name": ("k1", 1), "flops": ("10", 4)}),
                    (6, {"name": ("k2", 1), "flops": ("20", 4)})]


def test_a_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path):
    # spreadsheets save "CSV UTF-8" with one; the header's first name must still match
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffname,flops\nk1,10\n".encode("utf-8"))
    assert [cells["name"][0] for _, cells in csv_rows(path, ("name", "flops"))] == ["k1"]


def test_an_unreadable_file_names_itself(tmp_path):
    with pytest.raises(ParseError, match="absent.csv"):
        list(csv_rows(tmp_path / "absent.csv", ("name",)))
