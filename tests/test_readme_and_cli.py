"""The README's runnable examples and the command line (exit codes, outputs, messages)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks(lang, section):
    text = (ROOT / "README.md").read_text()
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", body, flags=re.S)


def _run(args, cwd, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


@pytest.mark.parametrize("index", range(3))
def test_readme_python_examples_run(index, tmp_path):
    code = _blocks("python", "Use from Python")[index]
    proc = _run([sys.executable, "-c", code], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_readme_shell_examples_run(tmp_path):
    for line in _blocks("sh", "Use from the shell")[0].strip().splitlines():
        args = line.split()
        assert args[0] == "python"
        proc = _run([sys.executable, *args[1:]], cwd=tmp_path)
        assert proc.returncode == 0, (line, proc.stderr)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["parameters"]["k"] == 10 and len(summary["components"]) == 3
    assert summary["data_checksum"].startswith("sha256:")
    for c in summary["components"]:
        assert c["k"] <= 10 and 0 < c["certified_ratio"] <= 1 + 1e-9
    assert (tmp_path / "out" / "components.png").exists()  # digits are images


def test_cli_fit_on_a_csv_and_certify_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    X[:, :3] += 2 * rng.standard_normal((60, 1))
    np.savetxt(tmp_path / "data.csv", X, delimiter=",", header=",".join(f"f{i}" for i in range(8)),
               comments="")
    proc = _run([sys.executable, "-m", "nspca_core", "fit", "data.csv", "--k", "3", "--out", "o"],
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    comps = np.loadtxt(tmp_path / "o" / "components.csv", delimiter=",", skiprows=1, usecols=1)
    assert set(np.flatnonzero(comps)) == {0, 1, 2}
    scores = np.loadtxt(tmp_path / "o" / "scores.csv", delimiter=",", skiprows=1)
    assert scores.shape == (60,)
    proc = _run([sys.executable, "-m", "nspca_core", "certify", "data.csv", "--k", "3",
                 "--x", "o/components.csv"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "certified ratio" in proc.stdout


@pytest.mark.parametrize("args, msg", [
    (["fit", "nope.csv", "--k", "3", "--out", "o"], "neither a file nor a built-in dataset"),
    # the library's `k` is phrased as the option the user typed
    (["fit", "digits", "--k", "0", "--out", "o"], r"--k must be an int in \[1, n_features=64\]"),
    (["fit", "digits", "--k", "three", "--out", "o"], "invalid int value"),
    (["certify", "digits", "--k", "3", "--x", "missing.csv"], "does not exist"),
])
def test_cli_bad_input_exits_1_with_message(args, msg, tmp_path):
    proc = _run([sys.executable, "-m", "nspca_core", *args], cwd=tmp_path)
    assert proc.returncode == 1
    assert re.search(msg, proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_rejects_infeasible_x(tmp_path):
    np.savetxt(tmp_path / "x.csv", -np.ones((64, 1)) / 8, delimiter=",", header="c", comments="")
    proc = _run([sys.executable, "-m", "nspca_core", "certify", "digits", "--k", "3", "--x", "x.csv"],
                cwd=tmp_path)
    assert proc.returncode == 1 and "not feasible" in proc.stderr


def test_cli_help_is_friendly():
    proc = _run([sys.executable, "-m", "nspca_core", "--help"], cwd=ROOT)
    assert proc.returncode == 0
    assert "nonnegative sparse" in proc.stdout.lower() and "exit codes" in proc.stdout
