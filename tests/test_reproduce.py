"""The reproduction (``python -m tools.reproduce``) runs end to end on the quick grid with synthetic
stand-ins, writes where it is told, and draws its figures with Matplotlib."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]


def test_reproduce_quick_on_standins(tmp_path):
    out, report = tmp_path / "figures", tmp_path / "docs" / "REPORT.md"
    report.parent.mkdir()
    proc = subprocess.run([sys.executable, "-m", "tools.reproduce", "--quick", "--standin",
                           "--out", str(out), "--report", str(report),
                           "--benchmarks", str(tmp_path / "no-bench")],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (out / "REPRODUCTION.md").read_text()
    assert "Section failed" not in text
    for part in ("Seed 002", "Seed 003", "Seed 004", "Seed 001", "STAND-IN", "python -m tools.reproduce"):
        assert part in text
    assert "No benchmark output found" in text
    pngs = {p.name for p in out.glob("*.png")}
    csvs = {p.name for p in out.glob("*.csv")}
    assert {"s002_fig3_components.png", "s002_fig4_cbcl.png", "s002_fig9_spectra.png", "s003_fig3.png"} <= pngs
    assert {"s002_fig4_cbcl.csv", "s001_tables.csv", "s004_table1.csv", "s004_table2.csv"} <= csvs
    t2 = pd.read_csv(out / "s004_table2.csv")
    assert list(t2["dataset"]) == ["kos"] and "stand-in" in t2["data"][0]
    # the joint method is measured, not copied: its total is a variance of 8 disjoint components
    assert 0 < t2["Joint"][0] and t2["paper Joint"][0] == 61.4
    # nothing is written outside the folders given on the command line
    assert not (ROOT / "tools" / "REPRODUCTION.md").exists()
    # the report in --out links its own folder; the copy links into --out from its own folder
    assert "](s002_fig4_cbcl.png)" in text
    assert "](../figures/s002_fig4_cbcl.png)" in report.read_text()
    assert "\x00" not in text and "\x00" not in report.read_text()
    for name in pngs:
        with Image.open(out / name) as im:
            assert im.format == "PNG" and min(im.size) >= 100
            # a drawn figure: more than a handful of colours (axes, curves, text)
            assert len(np.unique(np.asarray(im.convert("RGB")).reshape(-1, 3), axis=0)) > 8
    # numbers come from the run: the certified band is above every answer
    df = pd.read_csv(out / "s002_fig4_cbcl.csv")
    assert (df["certified UB/λ1"] >= df["best/λ1"] - 1e-9).all()
    assert ((df["certified ratio"] > 0) & (df["certified ratio"] <= 1 + 1e-9)).all()


def test_the_reproduction_is_not_in_the_package():
    assert not (ROOT / "nspca_core" / "reproduce.py").exists()
    assert not (ROOT / "nspca_core" / "pngplot.py").exists()
    makefile = (ROOT / "Makefile").read_text()
    assert "-m tools.reproduce" in makefile and "nspca_core.reproduce" not in makefile
