import numpy as np

from fusionlib.ptgan.toys.runs import coverage_table, curve_frame, train_ring


def test_train_ring_smoke_and_summaries():
    runs = [train_ring(m, s, 4, eval_at=(2, 4), eval_alphas=(1.0, 0.5), n_eval=40, n_metrics=40,
                       n_data=100, n_snapshot=10) for m in ("pt+cp", "gp") for s in (0, 1)
            if m == "pt+cp" or s == 0]
    r = runs[0]
    assert r.samples.shape == (40, 2) and set(r.snapshots) == {2, 4}
    assert [it for it, _ in r.w1[0.5]] == [2, 4]
    assert all(np.isfinite(w) for _, w in r.w1[1.0])
    table = coverage_table(runs)
    assert list(table["method"]) == ["pt+cp", "gp"]
    assert list(table["n_seeds"]) == [2, 1]
    curves = curve_frame(runs[:1])
    assert len(curves) == 4 and set(curves["alpha"]) == {1.0, 0.5}


def test_train_ring_is_seeded_and_accepts_figure11_generators():
    kw = dict(n_eval=30, n_metrics=30, n_data=100, generator_hidden=(4,), latent_dim=2,
              noise="uniform_sign")
    a = train_ring("pt+cp", 3, 3, **kw)
    b = train_ring("pt+cp", 3, 3, **kw)
    c = train_ring("pt+cp", 3, 3, interpolated_noise=False, **kw)
    assert np.array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, train_ring("pt+cp", 4, 3, **kw).samples)
    assert a.config["interpolated_noise"] and not c.config["interpolated_noise"]
