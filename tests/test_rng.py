"""The one seed scheme: named streams are reproducible and never coincide."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.rng import child, numpy_rng, seed_int, sequence, torch_generator


def _first(seed, *keys, n=8):
    return numpy_rng(seed, *keys).integers(0, 2**62, size=n).tolist()


def test_same_path_same_stream():
    assert _first(3, "toy", "rep", 1) == _first(3, "toy", "rep", 1)
    a = torch.rand(5, generator=torch_generator(3, "train"))
    b = torch.rand(5, generator=torch_generator(3, "train"))
    assert torch.equal(a, b)


def test_streams_of_repetitions_iterations_and_roles_do_not_coincide():
    # the old scheme's collision: a run's snapshot at iteration t used seed + t + 1, the next
    # repetition's evaluation at iteration t used (seed + 1) + t: the same stream
    paths = [(root, "rep", rep, role, it) for root in (0, 1) for rep in range(4)
             for role in ("eval", "snapshot", "train", "data") for it in range(0, 60, 10)]
    firsts = {tuple(_first(*p)) for p in paths}
    assert len(firsts) == len(paths)
    ints = {seed_int(*p) for p in paths}
    assert len(ints) == len(paths)


def test_key_order_and_type_matter():
    assert _first(0, "rep", 1, "eval") != _first(0, "eval", "rep", 1)
    assert _first(0, 1) != _first(0, "1")
    assert _first(0, "a", "b") != _first(0, "ab")


def test_child_is_the_same_as_appending_keys():
    c = child(child(7, "rep", 2), "eval")
    assert c == (7, "rep", 2, "eval")
    assert _first(c) == _first(7, "rep", 2, "eval")
    assert _first(c, 5) == _first(7, "rep", 2, "eval", 5)


def test_streams_are_statistically_independent():
    # correlation of two neighbouring repetitions' uniforms is at the noise level
    a = numpy_rng(0, "rep", 1).random(200_000)
    b = numpy_rng(0, "rep", 2).random(200_000)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.01


def test_seed_int_fits_libraries_that_take_32_bits():
    for keys in itertools.product(range(3), ("a", "b")):
        assert 0 <= seed_int(11, *keys) < 2**32


@pytest.mark.parametrize("bad", [-1, 1.5, "0", None, True, ()])
def test_bad_root_seed_raises(bad):
    with pytest.raises(InvalidInputError):
        sequence(bad)


@pytest.mark.parametrize("bad", [-3, 2.0, None, ("a",)])
def test_bad_key_raises(bad):
    with pytest.raises(InvalidInputError, match="key"):
        numpy_rng(0, bad)
