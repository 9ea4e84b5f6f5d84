"""The command line under bad input (issue 18 items 2, 11, 12, 13): exit 1 with a message naming
the option and what is allowed, never a traceback; what the reader did is on stderr and in
summary.json.  Run in-process through ``cli.main`` (one subprocess run checks the real exit)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nspca_core import cli
from nspca_core.enet import enet_samples
from tests.data.io.test_load_errors import forge_zip, images, zip_bytes

ROOT = Path(__file__).resolve().parents[3]


def run(args, capsys):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def write_csv(path: Path, rows, sep=",") -> Path:
    path.write_text("\n".join(sep.join(str(c) for c in r) for r in rows) + "\n")
    return path


def planted(m=30, n=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) + 0.5
    X[:, :2] += 2 * rng.standard_normal((m, 1))
    return X.round(4) + 0.00005  # every value written with decimals


@pytest.fixture
def data_csv(tmp_path):
    X = planted()
    return write_csv(tmp_path / "d.csv", [[f"f{j}" for j in range(X.shape[1])]] + X.tolist())


# ----------------------------------------------------------------------------- item 12

def test_out_pointing_at_a_file_exits_1_before_any_work(tmp_path, data_csv, capsys):
    (tmp_path / "taken").write_text("x")
    code, _, err = run(["fit", data_csv, "--k", 2, "--out", tmp_path / "taken"], capsys)
    assert code == 1
    assert re.search(r"error: --out '.*taken' is an existing file; --out names a folder", err)
    assert (tmp_path / "taken").read_text() == "x"


def test_folder_as_data_says_folder(tmp_path, capsys):
    code, _, err = run(["fit", tmp_path, "--k", 2, "--out", tmp_path / "o"], capsys)
    assert code == 1 and "is a folder; give a data file" in err


@pytest.mark.parametrize("content, msg", [
    ("", r"--x '.*x.csv' is empty; it must hold the components as numbers"),
    ("\n\n", r"--x '.*x.csv' is empty"),
    ("a,b\n", r"--x '.*x.csv' holds no numbers, only a header line"),
    ("c\n0.5\nhello\n", r"--x '.*x.csv': 'hello' on line 3 is not a number \(lines counted from 1, "
                        r"the header line included\)"),
    ("c\nnan\n1\n", r"--x '.*x.csv' holds NaN or infinite values"),
    ("1,2\n3\n", r"--x '.*x.csv' has rows of different lengths"),
    ("c\n0.5\n0.5\n", r"--x '.*x.csv' has shape \(2, 1\); expected 4 rows"),
])
def test_bad_x_file_names_x(tmp_path, data_csv, content, msg, capsys):
    (tmp_path / "x.csv").write_text(content)
    code, _, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path / "x.csv"], capsys)
    assert code == 1 and re.search(msg, err), err


def test_x_folder_and_missing(tmp_path, data_csv, capsys):
    code, _, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path], capsys)
    assert code == 1 and "--x" in err and "is a folder" in err
    code, _, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path / "none.csv"], capsys)
    assert code == 1 and "does not exist" in err


@pytest.mark.parametrize("extra, msg", [
    (["--random-state", "-1"], r"--random-state must be a nonnegative integer \(0, 1, 2, \.\.\.\); got -1"),
    (["--seed", "-1"], r"--random-state must be a nonnegative integer \(0, 1, 2, \.\.\.\); got -1"),  # deprecated name
    (["--eps", "0"], r"--eps must be a number strictly between 0 and 1 \(e\.g\. 0\.1\); got 0"),
    (["--eps", "1"], r"--eps must be a number strictly between 0 and 1"),
    (["--eps", "nan"], r"--eps must be a number strictly between 0 and 1"),
    (["--eps", "inf"], r"--eps must be a number strictly between 0 and 1"),
    (["--eps", "1e-300", "--method", "enet"],
     r"--eps 1e-300 with --d 3 would draw [0-9.]+e\+300 random directions for the ε-net \(method "
     r"enet\); at most 10,000,000 are allowed: use --eps [0-9.e-]+ or larger, or a smaller --d"),
    (["--eps", "1e-300"], r"--eps 1e-300 with --d 3 .*\(method auto\)"),
    (["--d", "0"], r"--d must be a positive integer"),
    (["--d", "5"], r"--d must be at most the number of features \(4\); got 5"),
    (["--components", "0"], r"--components must be a positive integer; got 0"),
    (["--k", "0"], r"--k must be an int in \[1, n_features=4\]; got 0"),
    (["--k", "9"], r"--k must be an int in \[1, n_features=4\]; got 9"),
    (["--method", "nope"], r"--method must be one of 'auto'"),
    (["--resize", "3"], r"--resize must look like 32x32 \(HEIGHTxWIDTH, positive integers\)"),
    (["--max-bytes", "0"], r"--max-bytes must be a positive integer; got 0"),
    (["--max-bytes", "10"], r"is 1,\d{3} bytes, over the size cap of 10 bytes; raise --max-bytes"),
    (["--header", "maybe"], r"argument --header: invalid choice: 'maybe'"),
])
def test_bad_options_exit_1_naming_the_option(tmp_path, data_csv, extra, msg, capsys):
    args = ["fit", data_csv, "--k", 2, "--out", tmp_path / "o", *extra]
    try:
        code, _, err = run(args, capsys)
    except SystemExit as exc:  # argparse's own usage errors
        code, err = exc.code, capsys.readouterr().err
    assert code == 1 and re.search(msg, err), err


def test_suggested_eps_is_the_boundary_of_the_cap():
    n, d = 64, 3
    msg = None
    try:
        cli._check_net_size(type("A", (), {"method": "enet", "strategy": "deflation-remove",
                                           "eps": 1e-12})(), d, n)
    except cli._BadInput as exc:
        msg = str(exc)
    eps = float(re.search(r"use --eps ([0-9.e-]+) or larger", msg).group(1))
    # the suggestion is printed with 2 digits: allowed a little above it, refused a little below
    assert enet_samples(d, eps * 1.05, n) <= cli.MAX_NET_SAMPLES < enet_samples(d, eps * 0.9, n)


# ----------------------------------------------------------------------------- item 13 (CLI part)

def test_two_features_run_with_the_default_d(tmp_path, capsys):
    rng = np.random.default_rng(3)
    X = rng.random((20, 2)) + 0.25
    path = write_csv(tmp_path / "two.csv", [["a", "b"]] + X.round(6).tolist())
    code, out, err = run(["fit", path, "--k", 1, "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["parameters"]["d"] == 2 and summary["parameters"]["d_given"] is False
    code, _, err = run(["fit", path, "--k", 1, "--d", 2, "--out", tmp_path / "o2"], capsys)
    assert code == 0, err


def test_one_feature_is_refused_with_the_reason(tmp_path, capsys):
    path = write_csv(tmp_path / "one.csv", [["a"], [1.5], [2.5], [0.5]])
    code, _, err = run(["fit", path, "--k", 1, "--out", tmp_path / "o"], capsys)
    assert code == 1 and "a single column (feature)" in err


# ----------------------------------------------------------------------------- items 1, 2

def test_reading_is_reported_on_stderr_and_in_summary(tmp_path, capsys):
    X = planted(m=12, n=3)
    rows = [["id", "amount", "b", "c"]] + [[f"s{i}", f'"{int(1000 * (i + 1)):,}"'] + r[1:]
                                          for i, r in enumerate(X.tolist())]
    path = write_csv(tmp_path / "t.csv", rows)
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 0, err
    assert "read t.csv: 12 samples x 3 features" in err
    assert ("note: --header yes: first line read as column names (detected: text above numbers); if it is "
            "data, choose --header no") in err
    assert "thousands separators, read as numbers" in err
    assert re.search(r"warning: 1 column\(s\) not used as features:\n    - id: text, e\.g\. 's0'", err)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["dropped_columns"] == [
        {"column": "id", "reason": "text, e.g. 's0'; kept as metadata, not a feature"}]
    assert summary["reading_notes"][0].startswith("header: first line read as column names")
    assert summary["parameters"]["header"] == "auto"


def test_header_option_of_the_cli(tmp_path, capsys):
    X = planted(m=10, n=3)
    path = write_csv(tmp_path / "y.csv", [[2019, 2020, 2021]] + X.tolist())
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "a", "--quiet"], capsys)
    assert code == 0 and "read y.csv: 10 samples x 3 features" in err
    assert "its numbers (2019, 2020, 2021)" in err
    comps = (tmp_path / "a" / "components.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in comps[1:]] == ["2019", "2020", "2021"]
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "b", "--header", "no",
                        "--quiet"], capsys)
    assert code == 0 and "read y.csv: 11 samples x 3 features" in err
    assert "--header no: first line read as data (as asked)" in err
    # numeric feature names in components.csv are not taken for a component by certify
    code, out, err = run(["certify", path, "--k", 2, "--x", tmp_path / "a" / "components.csv"],
                         capsys)
    assert code == 0 and "certified ratio" in out, err


def test_library_messages_name_the_cli_options(tmp_path, capsys):
    path = write_csv(tmp_path / "n.csv", [["a", "b", "c"], [1, 2, 3], ["NA", 1, 2], [3, 4, 5.5],
                                          [1, 0, 2.5]])
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o"], capsys)
    assert code == 1
    assert "choose --nan-policy drop-rows, drop-columns or impute-mean" in err
    assert "nan_policy" not in err and "(line 3, column 'a')" in err
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o", "--nan-policy",
                        "drop-rows", "--quiet"], capsys)
    assert code == 0 and "note: --nan-policy drop-rows: dropped 1 row(s)" in err


def test_zip_options_and_messages(tmp_path, capsys):
    from tests.data.io.test_load_errors import png_bytes

    members = {**images(4, (4, 5)), **{f"z{i}.png": png_bytes(np.full((6, 6), 9 * i, np.uint8))
                                       for i in range(4)}}
    path = tmp_path / "mixed.zip"
    path.write_bytes(zip_bytes(members))
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o"], capsys)
    assert code == 1 and "or pass --resize HEIGHTxWIDTH to resize them" in err
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o", "--resize", "4x5",
                        "--quiet"], capsys)
    assert code == 0 and "note: --resize 4x5: 4 of 8 image(s) resized" in err, err


# ----------------------------------------------------------------------------- item 11

def test_forged_zip_exits_1_without_traceback_in_a_real_process(tmp_path):
    members = {**images(), "bomb.png": b"\x00" * 3_000_000}
    (tmp_path / "f.zip").write_bytes(forge_zip(zip_bytes(members), "bomb.png", file_size=50))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "nspca_core", "fit", "f.zip", "--k", "2",
                           "--out", "o"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "damaged or forged" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- issue 31, items 3 and 4

@pytest.mark.parametrize("out", ["", "   "])
def test_empty_out_is_refused_and_nothing_is_written(tmp_path, data_csv, capsys, monkeypatch, out):
    """``--out ''`` was the current folder: fit exited 0 and overwrote components.csv there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "components.csv").write_text("mine")
    code, _, err = run(["fit", data_csv, "--k", 2, "--out", out, "--quiet"], capsys)
    assert code == 1
    assert re.search(r"error: --out '\s*' is empty; give the folder for the result files", err), err
    assert (tmp_path / "components.csv").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["components.csv", "d.csv"]
    (tmp_path / "x.csv").write_text("c\n" + "\n".join(["0.7071", "0.7071", "0", "0"]) + "\n")
    code, _, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path / "x.csv", "--out", out], capsys)
    assert code == 1 and "is empty; give the folder" in err, err
    assert not (tmp_path / "certificate.json").exists()


@pytest.mark.parametrize("extra, msg", [
    (["--variable", "X"], r"--variable 'X' applies only to .npz and .mat files \(it names the array to read\); "
                          r"d.csv was read as csv, which has no variables: leave --variable out"),
    (["--resize", "4x4"], r"--resize 4x4 applies only to a .zip of images; d.csv was read as csv: "
                          r"leave --resize out"),
])
@pytest.mark.parametrize("command", ["fit", "certify"])
def test_options_that_do_not_apply_are_refused(tmp_path, data_csv, capsys, extra, msg, command):
    (tmp_path / "x.csv").write_text("0.7071\n0.7071\n0\n0\n")
    tail = ["--out", tmp_path / "o"] if command == "fit" else ["--x", tmp_path / "x.csv"]
    code, _, err = run([command, data_csv, "--k", 2, *extra, *tail, "--quiet"], capsys)
    assert code == 1 and re.search(msg, err), err
    assert not (tmp_path / "o").exists()


def test_options_that_do_not_apply_to_npy_and_datasets(tmp_path, capsys):
    np.save(tmp_path / "a.npy", planted())
    code, _, err = run(["fit", tmp_path / "a.npy", "--k", 2, "--variable", "X", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "a.npy was read as npy, which has no variables" in err, err
    code, _, err = run(["fit", "digits", "--k", 2, "--resize", "8x8", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "--resize 8x8 applies only to a .zip of images; 'digits' is a built-in dataset" in err


def test_variable_still_applies_to_npz(tmp_path, capsys):
    np.savez(tmp_path / "a.npz", X=planted(), Y=planted(seed=1))
    code, _, err = run(["fit", tmp_path / "a.npz", "--k", 2, "--variable", "Y", "--out", tmp_path / "o",
                        "--quiet"], capsys)
    assert code == 0, err


def test_square_x_is_read_one_component_per_column_and_says_so(tmp_path, data_csv, capsys):
    """A 4 x 4 --x on 4 features fits both readings: the one used is said on stderr."""
    rows = [[0.7071, 0, 0, 0], [0.7071, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]]
    write_csv(tmp_path / "x.csv", rows)
    code, out, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path / "x.csv", "--quiet"], capsys)
    assert re.search(r"note: --x '.*x.csv' is square \(4 x 4\): read as one component per column \(a row per "
                     r"feature, as fit writes components.csv\); if your components are rows, transpose", err), err
    # read by columns all four are feasible; read by rows the 4th would be (0, 0, 1, 1), not unit norm
    assert code == 0 and "component 4: variance=" in out, err
    write_csv(tmp_path / "y.csv", [[0.7071, 0.7071, 0, 0]])
    code, out, err = run(["certify", data_csv, "--k", 2, "--x", tmp_path / "y.csv", "--quiet"], capsys)
    assert code == 0 and "is square" not in err, err
