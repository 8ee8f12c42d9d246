"""present_ring_runs reads the toys cells without computing them, keyed as ring_runs keys
them (its oracle), and gives None while any cell lacks a shard."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlib.compendium.cells import shard_path
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.toys import cells as P
from fusionlib.ptgan.toys.present import present_ring_runs


@pytest.mark.parametrize("experiment", ["ptgan_ring", "ptgan_mixup", "ptgan_fig11"])
def test_present_runs_are_ring_runs_and_nothing_is_computed(tmp_path, experiment):
    assert present_ring_runs(experiment, "smoke", 0, root=tmp_path) is None
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # nothing computed
    want = P.ring_runs(experiment, "smoke", 0, root=tmp_path, progress=False)
    got = present_ring_runs(experiment, "smoke", 0, root=tmp_path)
    assert got is not None and list(got) == list(want)
    for k in want:
        assert got[k].method == want[k].method and got[k].seed == want[k].seed
        assert got[k].w1 == want[k].w1 and got[k].metrics == want[k].metrics
        np.testing.assert_array_equal(got[k].samples, want[k].samples)
    exp = {"ptgan_ring": P.RING, "ptgan_mixup": P.MIXUP, "ptgan_fig11": P.FIG11}[experiment]
    shard_path(tmp_path, experiment, "smoke", exp.cells("smoke", 0)[0].cell_id).unlink()
    assert present_ring_runs(experiment, "smoke", 0, root=tmp_path) is None


def test_unknown_experiment_is_named():
    with pytest.raises(InvalidInputError, match="ptgan_rings"):
        present_ring_runs("ptgan_rings", "smoke")
