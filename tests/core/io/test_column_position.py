"""A column by name or by int index (the library), and ``--label-column 0`` from the shell: the
command line reads a label column given as the text of an index, named by no column, as that
index (counted from 0, as the message says); a column called so wins."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nspca_core import cli
from nspca_core._common.validation import InputError
from nspca_core.io import load_file
from nspca_core.io.loaded import column_position


def brute_position(column, names):
    """Obviously correct: a string is a name; an int (not a bool) in [-n, n) an index."""
    if isinstance(column, str):
        return names.index(column) if column in names else None
    if isinstance(column, bool):
        return None
    return column % len(names) if -len(names) <= column < len(names) else None


names_st = st.lists(st.text(alphabet="ab01-", min_size=1, max_size=3), min_size=1, max_size=6, unique=True)


@given(names_st, st.one_of(st.integers(-8, 8), st.text(alphabet="ab01- ", max_size=3), st.booleans()))
def test_column_position_is_a_name_or_an_int_index(names, column):
    assert column_position(column, names) == brute_position(column, names)


def labelled_csv(tmp_path, header="kind,g1,g2,g3"):
    rows = [header] + [f"{'ab'[i % 2]},{i},{i * i % 7},{(3 * i) % 5}" for i in range(8)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def fit_labels(tmp_path, path, label):
    out = tmp_path / "o"
    code = cli.main(["fit", str(path), "--k", "2", "--label-column", label, "--out", str(out), "--quiet"])
    return code, out


def test_library_reads_text_as_a_name_only(tmp_path):
    path = labelled_csv(tmp_path)
    assert list(load_file(path, label_column=0).labels) == ["a", "b"] * 4
    with pytest.raises(InputError, match=r"an index in \[0, 3\]; got '0'"):
        load_file(path, label_column="0")


def test_cli_label_column_by_index_counted_from_zero(tmp_path, capsys):
    path = labelled_csv(tmp_path)
    code, _ = fit_labels(tmp_path, path, "0")
    said = capsys.readouterr()
    assert code == 0, said.err
    assert "kind: used as labels" in said.out + said.err


def test_cli_column_named_like_an_index_wins(tmp_path, capsys):
    path = tmp_path / "t.csv"  # column "2" holds the labels; position 2 is the numeric g2
    path.write_text("g1,2,g2\n" + "".join(f"{i},{'xy'[i % 2]},{i * 3 % 5}\n" for i in range(8)))
    code, _ = fit_labels(tmp_path, path, "2")
    said = capsys.readouterr()
    assert code == 0, said.err
    assert "2: used as labels" in said.out + said.err and "g2: used as labels" not in said.out + said.err


def test_cli_index_out_of_range_is_refused_with_the_range(tmp_path, capsys):
    code, _ = fit_labels(tmp_path, labelled_csv(tmp_path), "7")
    err = capsys.readouterr().err
    assert code != 0 and "an index in [0, 3]" in err and "Traceback" not in err, err
