"""The long components table shared by the CLI's components_long.csv and the app's download."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core.io.written import components_long


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), r=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_long_table_rebuilds_the_matrix_and_ranks_by_size(n, r, seed):
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(n, r)) * (rng.random((n, r)) < 0.4)
    L[rng.integers(0, n), 0] = 0.5  # ties and zeros occur
    names = [f"f{i}" for i in range(n)]
    df = components_long(L, names)
    back = np.zeros_like(L)
    for c, i, v in zip(df["component"], df["index"], df["loading"]):
        back[i - 1, int(c.split("_")[1]) - 1] = v
    assert np.array_equal(back, L)
    assert len(df) == np.count_nonzero(L)
    for j in range(r):  # brute force: sort the nonzeros of column j by -|value|, then index
        col = L[:, j]
        expect = sorted(np.flatnonzero(col), key=lambda i: (-abs(col[i]), i))
        grp = df[df["component"] == f"component_{j + 1}"]
        assert grp["index"].tolist() == [i + 1 for i in expect]
        assert grp["rank"].tolist() == list(range(1, len(expect) + 1))
        assert grp["feature"].tolist() == [names[i] for i in expect]


def test_long_table_checks_its_names():
    with pytest.raises(ValueError, match=r"loadings of shape \(3, 1\) need 3 feature names"):
        components_long(np.ones((3, 1)), ["a", "b"])
