"""The command line says the library's messages with its own options (issue 37 item 5): composed from
the parts the library gives (``plain``, ``remedy``, ``predicate``, a note's choice applied), naming
``--nan-policy``, ``--max-bytes``, ``--variable``, ``--resize`` and the values to choose, never the
library's ``nan_policy=`` / ``max_bytes=`` / ``variable=`` / ``resize=``."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nspca_core import cli
from nspca_core._common.said import Note, Remedy, either
from nspca_core._common.validation import InputError
from nspca_core.cli.options import _parser
from nspca_core.cli.words import FLAGS, for_shell
from nspca_core.io import NAN_POLICIES, load_file

ROOT = Path(__file__).resolve().parents[3]
#: the library's spellings of an argument given a value: none may reach the shell
API_STYLE = re.compile(r"\b(nan_policy|max_bytes|variable|resize|header|orientation|label_column)\s*=|`[a-z_]+`")


def run(args, capsys):
    code = cli.main([str(a) for a in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def fit(path, tmp_path, *extra):
    return ["fit", path, "--k", 2, "--out", tmp_path / "o", "--quiet", *extra]


def png(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def nan_csv(tmp_path) -> Path:
    path = tmp_path / "n.csv"
    path.write_text("a,b,c\n1,2,3\nNA,1,2\n3,4,5.5\n1,0,2.5\n2,2,1\n")
    return path


def test_nan_error_names_the_option_and_every_policy_that_handles_them(tmp_path, nan_csv, capsys):
    code, err = run(fit(nan_csv, tmp_path), capsys)
    handling = [p for p in NAN_POLICIES if p != "error"]  # the registry's policies that handle NaN/inf
    assert code == 1
    assert f"choose --nan-policy {either(handling)} to handle them" in err, err
    assert "(line 3, column 'a')" in err and not API_STYLE.search(err), err
    with pytest.raises(InputError) as exc:  # the library says the same with its argument
        load_file(nan_csv)
    assert "nan_policy='drop-rows'" in str(exc.value)


@pytest.mark.parametrize("policy, said", [
    ("drop-rows", "note: --nan-policy drop-rows: dropped 1 row(s) with NaN/inf (lines 3;"),
    ("drop-columns", "    - a: NaN/inf values (--nan-policy drop-columns)"),
    ("impute-mean", "note: --nan-policy impute-mean: replaced 1 NaN/inf value(s)"),
])
def test_notes_of_a_policy_applied_name_the_option(tmp_path, nan_csv, capsys, policy, said):
    code, err = run(fit(nan_csv, tmp_path, "--nan-policy", policy), capsys)
    assert code == 0 and said in err, err
    assert "note: --header yes: first line read as column names" in err
    assert not API_STYLE.search(err), err


def test_a_drop_that_leaves_no_data_offers_the_other_policies(tmp_path, capsys):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,c\nNA,2,3\n1,NA,2\n3,4,NA\n")
    code, err = run(fit(path, tmp_path, "--nan-policy", "drop-rows"), capsys)
    assert code == 1 and "choose --nan-policy drop-columns or impute-mean" in err, err
    assert not API_STYLE.search(err) and "'impute-mean'" not in err, err


def test_a_file_over_the_cap_names_max_bytes_and_the_cap(tmp_path, nan_csv, capsys):
    size = nan_csv.stat().st_size
    code, err = run(fit(nan_csv, tmp_path, "--max-bytes", 16), capsys)
    assert code == 1
    assert f"is {size} bytes, over the size cap of 16 bytes; raise --max-bytes" in err, err
    assert not API_STYLE.search(err), err
    code, err = run(fit(nan_csv, tmp_path, "--max-bytes", size, "--nan-policy", "drop-rows"), capsys)
    assert code == 0, err  # the cap named is the one that decides


def test_several_arrays_list_the_variables_to_choose(tmp_path, capsys):
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "two.npz", first=rng.random((12, 4)), second=rng.random((12, 5)))
    code, err = run(fit(tmp_path / "two.npz", tmp_path), capsys)
    assert code == 1 and "several numeric arrays (first, second)" in err
    assert err.rstrip().endswith("; choose --variable first or second"), err
    assert not API_STYLE.search(err), err
    code, err = run(fit(tmp_path / "two.npz", tmp_path, "--variable", "second"), capsys)
    assert code == 0 and "12 samples x 5 features" in err, err


def test_mixed_image_sizes_say_how_to_resize_in_a_real_process(tmp_path):
    with zipfile.ZipFile(tmp_path / "mixed.zip", "w") as z:
        for i in range(3):
            z.writestr(f"a{i}.png", png(np.full((4, 5), 20 * i + 5, np.uint8)))
            z.writestr(f"b{i}.png", png(np.full((6, 6), 30 * i + 7, np.uint8)))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "nspca_core", "fit", "mixed.zip", "--k", "2", "--out", "o",
                           "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "images of mixed sizes: 4x5 (h x w): 3 file(s)" in proc.stderr
    assert "all images must have the same size, or pass --resize HEIGHTxWIDTH to resize them" in proc.stderr
    assert not API_STYLE.search(proc.stderr), proc.stderr


def test_resize_note_names_the_size_as_typed(tmp_path, capsys):
    with zipfile.ZipFile(tmp_path / "mixed.zip", "w") as z:
        for i in range(3):
            z.writestr(f"a{i}.png", png(np.full((4, 5), 20 * i + 5, np.uint8)))
            z.writestr(f"b{i}.png", png(np.full((6, 6), 30 * i + 7, np.uint8)))
    code, err = run(fit(tmp_path / "mixed.zip", tmp_path, "--resize", "6x6"), capsys)
    assert code == 0 and "note: --resize 6x6: 3 of 6 image(s) resized (bilinear)" in err, err
    assert not API_STYLE.search(err), err


@pytest.mark.parametrize("extra, said", [
    (["--k", 0], "error: --k must be an int in [1, n_features=3]; got 0"),
    (["--method", "nope"], "error: --method must be one of 'auto'"),
    (["--label-column", "zz"], "error: --label-column must be one of the column names ['a', 'b', 'c']"),
])
def test_one_argument_errors_lead_with_the_option(tmp_path, capsys, extra, said):
    path = tmp_path / "g.csv"
    path.write_text("a,b,c\n" + "\n".join(f"{i % 3 + 0.5},{i % 5 + 0.25},{i % 7 + 1.5}" for i in range(12)) + "\n")
    k, rest = (extra[1], []) if extra[0] == "--k" else (2, extra)
    code, err = run(["fit", path, "--k", k, "--out", tmp_path / "o", "--quiet", *rest], capsys)
    assert code == 1 and said in err and "`" not in err, err


# ----------------------------------------------------------------------------- for_shell on parts

def test_for_shell_composes_every_remedy_from_its_parts():
    """Each verb of a Remedy with each option, against the sentence written out by hand."""
    err = InputError(plain="4 NaN/inf value(s)", source="f.csv", argument="nan_policy", value="error",
                     remedy=Remedy("nan_policy", ("drop-rows", "impute-mean"), purpose="to handle them"))
    assert for_shell(err) == "f.csv: 4 NaN/inf value(s); choose --nan-policy drop-rows or impute-mean to handle them"
    err = InputError(plain="too big", remedy=Remedy("max_bytes", verb="raise", purpose="if this is intended"))
    assert for_shell(err) == "too big; raise --max-bytes if this is intended"
    err = InputError(plain="mixed", remedy=Remedy("resize", verb="pass", spelled="(height, width)", lead="or"))
    assert for_shell(err) == "mixed; or pass --resize HEIGHTxWIDTH"
    err = InputError(plain="gone", remedy=Remedy("download", verb="pass", spelled="True", lead="or"))
    assert for_shell(err) == "gone; or pass --download"
    note = Note("first line read as data (as asked)", argument="header", value=False,
                remedy=Remedy("header", (True,), lead="if it holds column names,"))
    assert for_shell(note) == ("--header no: first line read as data (as asked); if it holds column names, "
                               "choose --header yes")
    # an argument the command line has no option for: its remedy is left out, as the app does
    err = InputError(plain="no sheet", remedy=Remedy("data_dir", verb="pass"))
    assert for_shell(err) == "no sheet"


def test_for_shell_keeps_messages_without_parts():
    for exc in (InputError("`x` must be finite"), ValueError("plain words; nan_policy='x'"),
                InputError(argument="X", predicate="must be 2-D")):  # an argument with no option
        assert for_shell(exc) == str(exc)
    assert for_shell("a note as text") == "a note as text"


def test_every_option_named_exists_in_the_parser():
    """FLAGS names only options the parser defines (DATA: the positional argument)."""
    parser = _parser()
    fit_parser = parser._subparsers._group_actions[0].choices["fit"]  # noqa: SLF001 - argparse's tree
    defined = {s for a in fit_parser._actions for s in a.option_strings} | {"DATA"}
    assert {f.name for f in FLAGS.values()} <= defined
