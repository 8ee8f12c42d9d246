"""make claim ID=...: find a claim's chapter, show its row, near matches for unknown ids."""

from __future__ import annotations

import pytest

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.recompute import locate, main, row_text
from fusionlib.errors import InvalidInputError


@pytest.fixture
def executed(tmp_path):
    for chapter, cid in (("ptgan_tabular", "001-T3-adult-nd-pt+cp-RF"),
                         ("fusiongan", "000-C-latent_dim")):
        (tmp_path / chapter).mkdir()
        claims_frame([make_claim(cid, cid[:3], "Table 3", "q", 1.0, 1.0, scale="cpu",
                                 experiment=chapter, tolerance=0.1, exact="hand-made")]
                     ).to_csv(tmp_path / chapter / "claims.csv", index=False)
    return tmp_path


def test_locate_and_show(executed):
    assert locate("001-T3-adult-nd-pt+cp-RF", executed) == "ptgan_tabular"
    assert "verdict: reproduced" in row_text("000-C-latent_dim", executed)


def test_unknown_id_lists_near_matches(executed, capsys):
    with pytest.raises(InvalidInputError, match="nearest: 001-T3-adult-nd-pt\\+cp-RF"):
        locate("001-T3-adult-nd-ptcp-RF", executed)
    assert main(["locate", "nothing-like-it", "--out", str(executed)]) == 2
    assert "unknown claim id 'nothing-like-it'" in capsys.readouterr().err


def test_no_built_chapters_says_build_first(tmp_path):
    with pytest.raises(InvalidInputError, match="make book"):
        locate("x", tmp_path)
