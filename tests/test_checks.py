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


# ---------------------------------------------------------------- seeds: one rule everywhere
@pytest.mark.parametrize("value", [0, 7, 2**40, np.int64(3), np.uint32(5), np.int8(0)])
def test_check_seed_accepts_python_and_numpy_integers_from_zero(value):
    from fusionlib.checks import check_seed

    out = check_seed("seed", value)
    assert out == int(value) and type(out) is int


@pytest.mark.parametrize("value", [-1, np.int64(-2), 1.0, np.float64(2.0), "0", None, True,
                                   np.bool_(False), (0,)])
def test_check_seed_refuses_the_rest_naming_the_fix(value):
    from fusionlib.checks import check_seed
    from fusionlib.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=r"seed must be an integer >= 0.*e\.g\. 0"):
        check_seed("seed", value)
