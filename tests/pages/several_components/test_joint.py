"""Several components shows the joint certified ratio (issue 28, item 5)."""

from __future__ import annotations

import re

from tests.conftest import page_app
from ui import jobs, state


def test_joint_ratio_shown_for_disjoint_strategies_only():
    at = page_app("several_components.py", timeout=300,
                  **{state.DATASET: "synthetic-planted", state.K: 5, "sc_r": 3,
                     "sc_strategies": ["deflation-remove", "deflation-project"]})
    at.run()
    jobs.REGISTRY.wait(300)
    at.run()
    assert not at.exception and not at.error
    joint = [m for m in at.metric if "certified fraction of the best total" in m.label]
    assert len(joint) == 1  # deflation-remove (disjoint supports); projection deflation has none
    value = float(re.search(r"([\d.]+)%", joint[0].value).group(1))
    assert 95.0 <= value <= 100.0  # the planted set: near the joint optimum
