"""sustained.median is np.median, bit for bit, without importing numpy.ma."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.analysis.sustained import median

FINITE = st.floats(allow_nan=False, allow_infinity=True, width=64)


@settings(max_examples=300, deadline=None)
@given(st.lists(FINITE | st.sampled_from((0.0, -0.0, 1.5, -1.5)), min_size=1, max_size=40))
def test_median_is_numpys(values: list[float]):
    array = np.array(values)
    with np.errstate(all="ignore"):
        expected = float(np.median(array))
        got = median(array)
    assert np.float64(got).tobytes() == np.float64(expected).tobytes() or (
        got != got and expected != expected  # inf - inf in the middle: NaN both ways
    )


def test_the_sustained_figures_do_not_import_numpy_ma():
    code = (
        "import sys, numpy as np\n"
        "from anemon.analysis.sustained import sustained_figures\n"
        "el = np.arange(400.0); tps = 50 - el / 20; thermal = np.zeros(400)\n"
        "sustained_figures(el, tps, thermal)\n"
        "print('numpy.ma' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
