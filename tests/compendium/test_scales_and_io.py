from __future__ import annotations

import json

import pytest

from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json


@pytest.mark.parametrize("scale", SCALES)
def test_known_scales_are_accepted(scale):
    assert validate_scale(scale) == scale


@pytest.mark.parametrize("bad", ["CPU", "full", "", None, 1])
def test_unknown_scale_is_refused_with_the_allowed_values(bad):
    with pytest.raises(InvalidInputError, match="smoke, cpu, paper"):
        validate_scale(bad)


def test_atomic_write_leaves_no_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "out.csv"

    def broken(path):
        path.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(ValueError):
        atomic_write(target, lambda p: (_ for _ in ()).throw(ValueError("boom")))
    assert target.read_text() == "old"


def test_atomic_write_json_converts_numpy_values(tmp_path):
    import numpy as np

    path = atomic_write_json(tmp_path / "a.json", {"x": np.float32(1.5), "v": np.arange(3)})
    assert json.loads(path.read_text()) == {"x": 1.5, "v": [0, 1, 2]}


def test_settings_read_as_short_text_without_python_reprs():
    from fusionlib.compendium.run import setting_text

    text = setting_text({"compas": {"epochs": 300, "batch_size": 500}, "tau": 0.2,
                         "methods": ("pt+cp", "mp-1"), "flag": True, "none": None})
    assert text == ("compas (epochs 300, batch size 500), tau 0.2, methods pt+cp, mp-1, "
                    "flag yes, none none")
    for ch in "{}'[]":
        assert ch not in text
