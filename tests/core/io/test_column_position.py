"""A column asked for by position as text (what a shell passes): ``--label-column 0`` and
``label_column="0"`` name the first column when no column is called "0"; a column that is
called so wins; anything else is refused with the names and the index range."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nspca_core import cli
from nspca_core._common.validation import InputError
from nspca_core.io import load_file
from nspca_core.io.loaded import column_position


def brute_position(column, names):
    """Obviously correct: a name first, then an index (int or its decimal text) in range."""
    if isinstance(column, str) and column in names:
        return names.index(column)
    try:
        index = int(column) if isinstance(column, int) or column.strip().lstrip("-").isdigit() else None
    except AttributeError:
        index = None
    if index is None or isinstance(column, bool):
        return None
    return index % len(names) if -len(names) <= index < len(names) else None


names_st = st.lists(st.text(alphabet="ab01-", min_size=1, max_size=3), min_size=1, max_size=6, unique=True)


@given(names_st, st.one_of(st.integers(-8, 8), st.text(alphabet="ab01- ", max_size=3), st.booleans()))
def test_column_position_is_the_name_then_the_index(names, column):
    assert column_position(column, names) == brute_position(column, names)


def labelled_csv(tmp_path, first="kind"):
    rows = [f"{first},g1,g2,g3"] + [f"{'ab'[i % 2]},{i},{i * i % 7},{(3 * i) % 5}" for i in range(8)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_label_column_given_as_text_of_an_index(tmp_path):
    path = labelled_csv(tmp_path)
    by_index = load_file(path, label_column=0)
    by_text = load_file(path, label_column="0")
    assert list(by_text.labels) == list(by_index.labels) == ["a", "b"] * 4
    assert list(by_text.feature_names) == ["g1", "g2", "g3"]


def test_a_column_named_like_an_index_wins(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("g1,0,g2\n" + "".join(f"{i},{'xy'[i % 2]},{i * 3 % 5}\n" for i in range(8)))
    assert list(load_file(path, label_column="0").labels) == ["x", "y"] * 4


def test_out_of_range_text_index_is_refused_with_the_range(tmp_path):
    with pytest.raises(InputError, match=r"an index in \[0, 3\]; got '7'"):
        load_file(labelled_csv(tmp_path), label_column="7")


def test_cli_label_column_by_index(tmp_path, capsys):
    code = cli.main(["fit", str(labelled_csv(tmp_path)), "--k", "2", "--label-column", "0",
                     "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
