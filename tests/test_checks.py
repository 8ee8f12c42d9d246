from __future__ import annotations

import numpy as np
import pytest

from fusionlib.checks import is_int


@pytest.mark.parametrize("value", [0, -3, 10**20, np.int64(5), np.uint8(1)])
def test_python_and_numpy_integers_are_ints(value):
    assert is_int(value)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 1.0, "1", None, np.float32(2)])
def test_bools_floats_and_others_are_not_ints(value):
    assert not is_int(value)
