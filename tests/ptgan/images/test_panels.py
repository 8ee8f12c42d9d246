"""Figures 12-17 panels (fusionlib.ptgan.images.panels)."""

import numpy as np
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.images.panels import PANEL_FIGURES, diversity, paper_samples


def test_diversity_by_hand_and_seeding():
    # two images at distance 1 (pixels already in [0, 1]): every pair is the same pair
    imgs = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert diversity(imgs, 0, n_pairs=50) == (pytest.approx(1.0), pytest.approx(0.0))
    rng = np.random.default_rng(0)
    many = rng.integers(0, 256, size=(30, 4, 4)).astype(np.uint8)
    a = diversity(many, 1)
    assert a == diversity(many, 1) and a != diversity(many, 2)
    # collapsed samples (all alike) have no diversity
    assert diversity(np.repeat(many[:1], 10, axis=0), 0)[0] == 0.0


def test_diversity_needs_two_images():
    with pytest.raises(InvalidInputError, match="two images"):
        diversity(np.zeros((1, 4)), 0)


def test_panels_list_the_six_figures_and_nothing_below_paper_scale():
    assert list(PANEL_FIGURES) == [f"Figure {i}" for i in range(12, 18)]
    assert paper_samples("cpu") == {}
