"""The stacked path of FairPTGAN and FairWGANGP against the separate runs (oracle tests)."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.gan.stacked import rep_state_dict
from fusionlib.ptgan.fair.baselines import FairnessPenalty, soft_parity_gap
from fusionlib.ptgan.fair.mixing import GroupMixing
from fusionlib.ptgan.fair.stacked import StackedFairGAN, stacked_parity_gap
from fusionlib.ptgan.tabular.model import TabularPTGAN
from fusionlib.rng import numpy_rng

DISCRETE = ("race", "label", "colour")


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    g = numpy_rng(seed, "fair table")
    white = g.random(n) < 0.7
    x, y = g.normal(size=n) + white, g.normal(size=n)
    # rows 0-3 hold both ranges' ends, so that the even and the odd rows encode alike
    x[:4] = y[:4] = [-6, -6, 6, 6]
    return pd.DataFrame({
        "x": x, "y": y,
        "race": np.where(white, "White", "Non-white"),
        "label": np.where(x + g.normal(size=n) > 0.5, "1", "0"),
        "colour": g.choice(["r", "g", "b"], size=n)})


def _separate(method: str, frame: pd.DataFrame, seed: object, n_iter: int, total: int):
    if method == "fairptgan":
        m = TabularPTGAN("pt+cp", "nd", discrete_columns=DISCRETE, n_iter=n_iter,
                         overrides={"r": 0.2, "batch_size": 40},
                         minibatch=GroupMixing("race", "White"), seed=seed)
        return m.fit(frame)
    m = TabularPTGAN("gp", "nd", discrete_columns=DISCRETE, n_iter=n_iter,
                     overrides={"batch_size": 40}, seed=seed).fit(frame)
    return m.fit_more(total, generator_term=FairnessPenalty("race", "White", "label", "1"))


def _stacked(method: str, frame: pd.DataFrame, seeds: list, n_iter: int, total: int, *,
             rows=None, **options) -> StackedFairGAN:
    m = StackedFairGAN(method, sensitive="race", privileged="White", seeds=seeds,
                       discrete_columns=DISCRETE, n_iter=n_iter, batch_size=40, **options)
    if method == "fairwgangp":
        return m.fit_two_phases(frame, rows=rows, total=total, target="label", positive="1")
    return m.fit(frame, rows=rows)


def _gaps(sep: TabularPTGAN, st: StackedFairGAN, r: int) -> np.ndarray:
    out = []
    for net in ("generator", "critic"):
        ref = getattr(sep.step_, net).state_dict()
        mine = rep_state_dict(getattr(st.step_, net), r)
        out += [(mine[k].double() - v.double()).abs().flatten().numpy()
                for k, v in ref.items() if v.is_floating_point()]
    return np.concatenate(out)


def _alpha(method: str) -> float:
    return 0.7 if method == "fairptgan" else 1.0


@pytest.mark.parametrize("method", ["fairptgan", "fairwgangp"])
def test_one_repetition_is_bitwise_the_separate_run(method):
    frame = _table()
    sep = _separate(method, frame, 11, 5, 8)
    st = _stacked(method, frame, [11], 5, 8)
    a = sep.sample_encoded(60, 3, alpha=_alpha(method))
    b = st.sample_encoded(60, [3], alpha=_alpha(method))[0]
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["fairptgan", "fairwgangp"])
def test_each_repetition_is_its_separate_run_on_its_own_rows(method):
    frame = _table()
    half = np.arange(0, 600, 2), np.arange(1, 600, 2)
    st = _stacked(method, frame, [11, 12], 20, 30, rows=np.stack(half))
    got = st.sample_encoded(60, [3, 4], alpha=_alpha(method))
    for r, (seed, rows) in enumerate(zip([11, 12], half, strict=True)):
        # the separate run sees only its rows (both halves encode as the whole table does)
        sep = _separate(method, frame.iloc[rows].reset_index(drop=True), seed, 20, 30)
        np.testing.assert_array_equal(sep.encoder_.transform(frame),
                                      st.encoder_.transform(frame))
        # parameters within 2 lr per iteration (an Adam step on a gradient near 0 may flip its
        # sign under float rounding), most of them to rounding; as for the tabular stacked step
        gaps = _gaps(sep, st, r)
        assert gaps.max() <= 2 * 30 * sep.config_.lr_g and np.median(gaps) <= 1e-6
    # a repetition does not depend on another's rows: change repetition 1's rows only
    other = _stacked(method, frame, [11, 12], 20, 30,
                     rows=np.stack([half[0], np.arange(300, 600)]))
    again = other.sample_encoded(60, [3, 4], alpha=_alpha(method))
    np.testing.assert_array_equal(again[0], got[0])
    assert np.abs(again[1] - got[1]).max() > 5e-3


def test_the_minibatches_mix_the_two_groups_of_each_repetition():
    frame = _table()
    rows = np.stack([np.arange(0, 600, 2), np.arange(1, 600, 2)])
    st = _stacked("fairptgan", frame, [1, 2], 1, 1, rows=rows)
    x, r = st.step_.prepare(st._data, "cpu")
    col = st.step_.group_column
    inputs = st.step_.draw_inputs(x, r, st.trainer_.rng_)
    tb = inputs.tempered
    # q1 = alpha1 x0 + (1 - alpha1) x1 in the first half: the A=1 indicator is 1 - alpha1
    half = tb.q1.shape[1] // 2
    np.testing.assert_allclose(tb.q1[:, :half, col], 1 - tb.alpha1[:, :half], atol=1e-6)
    np.testing.assert_allclose(tb.q1[:, half:, col], tb.alpha1[:, half:], atol=1e-6)
    # planted fault: Algorithm 1's minibatches (no group mixing) break the identity
    st.step_.group_column = None
    tb = st.step_.draw_inputs(x, r, st.trainer_.rng_).tempered
    assert not np.allclose(tb.q1[:, :half, col], 1 - tb.alpha1[:, :half], atol=1e-3)


def test_stacked_parity_gap_is_the_gap_of_each_repetition():
    g = torch.Generator().manual_seed(0)
    y, a = torch.rand(3, 50, generator=g), torch.rand(3, 50, generator=g)
    got = stacked_parity_gap(y, a)
    want = torch.stack([soft_parity_gap(y[i], a[i]) for i in range(3)])
    torch.testing.assert_close(got, want)
    with pytest.raises(InvalidInputError, match="shape"):
        stacked_parity_gap(y, a[:, :10])


def test_fairwgangp_resumes_inside_either_phase(tmp_path):
    frame = _table()
    whole = _stacked("fairwgangp", frame, [5, 6], 6, 9)
    want = whole.sample_encoded(40, [1, 2])
    # a run cut off in the first phase, exactly at its end (the checkpoint written as the first
    # phase ends carries no term), and in the second phase
    for stop in (4, 6, 7):
        path = tmp_path / f"cut-{stop}.pt"
        cut = StackedFairGAN("fairwgangp", sensitive="race", privileged="White", seeds=[5, 6],
                             discrete_columns=DISCRETE, n_iter=6, batch_size=40,
                             checkpoint_path=str(path), checkpoint_every=1)
        if stop <= 6:
            cut.n_iter = stop
            cut.fit(frame)
            cut.n_iter = 6
        else:
            cut.fit(frame)
            cut.fit_more(stop, generator_term=cut.parity_term("label", "1"))
        resumed = _stacked("fairwgangp", frame, [5, 6], 6, 9, checkpoint_path=str(path),
                           checkpoint_every=1)
        np.testing.assert_array_equal(resumed.sample_encoded(40, [1, 2]), want)
    # planted fault: a second-phase checkpoint resumed without its term is refused
    path = tmp_path / "cut-7.pt"
    bare = StackedFairGAN("fairwgangp", sensitive="race", privileged="White", seeds=[5, 6],
                          discrete_columns=DISCRETE, n_iter=6, batch_size=40,
                          checkpoint_path=str(path))
    with pytest.raises(InvalidInputError, match="different"):
        bare.fit(frame)
    # planted fault: the same checkpoint resumed with another term (weight 5, not 10) is refused
    # by its signature
    other = StackedFairGAN("fairwgangp", sensitive="race", privileged="White", seeds=[5, 6],
                           discrete_columns=DISCRETE, n_iter=6, batch_size=40,
                           checkpoint_path=str(path))
    other._build(frame, None)
    other.step_.set_generator_term(other.parity_term("label", "1", weight=5.0))
    with pytest.raises(InvalidInputError, match="different"):
        other.trainer_.fit(other._data, 9)


def test_one_second_phase_iteration_gives_each_repetition_its_own_losses():
    """Per-repetition losses of one FairWGANGP iteration with the penalty on equal the separate
    runs' (a term summed over repetitions, a coupling, would change each)."""
    frame = _table()
    st = StackedFairGAN("fairwgangp", sensitive="race", privileged="White", seeds=[21, 22],
                        discrete_columns=DISCRETE, n_iter=1, batch_size=40)
    st.log_every = 1
    st.fit_two_phases(frame, rows=None, total=2, target="label", positive="1")
    assert st.trainer_.checkpoint_every == 0
    for r, seed in enumerate((21, 22)):
        sep = TabularPTGAN("gp", "nd", discrete_columns=DISCRETE, n_iter=1,
                           overrides={"batch_size": 40}, seed=seed, log_every=1).fit(frame)
        sep.fit_more(2, generator_term=FairnessPenalty("race", "White", "label", "1"))
        for key in ("g_loss", "d_loss"):
            assert st.trainer_.history_[-1][key][r] == pytest.approx(
                sep.trainer_.history_[-1][key], rel=1e-5, abs=1e-7), (r, key)
    every = StackedFairGAN("fairptgan", sensitive="race", privileged="White", seeds=[1],
                           discrete_columns=DISCRETE, n_iter=2, batch_size=40,
                           checkpoint_path=None, checkpoint_every=0)
    assert every.checkpoint_every == 0


def test_bad_input_is_named():
    frame = _table()
    with pytest.raises(InvalidInputError, match="method"):
        StackedFairGAN("fairgan", sensitive="race", privileged="White", seeds=[1])
    tiny = StackedFairGAN("fairptgan", sensitive="race", privileged="White", seeds=[1, 2],
                          discrete_columns=DISCRETE, n_iter=1, batch_size=40)
    few = np.stack([np.arange(0, 600, 2), np.flatnonzero(frame["race"] == "White")[:300]])
    with pytest.raises(InvalidInputError, match="repetition 1"):
        tiny.fit(frame, rows=few)  # repetition 1 holds no A=0 row
    with pytest.raises(InvalidInputError, match="total"):
        StackedFairGAN("fairwgangp", sensitive="race", privileged="White", seeds=[1],
                       discrete_columns=DISCRETE, n_iter=5).fit_two_phases(
            frame, rows=None, total=3, target="label", positive="1")
