"""Speed of the S_T protocol on Adult: stacked repetitions against separate runs; evaluation.

In one run, on Adult's real encoding (Table 9 networks with the Gumbel-softmax head), for PT+CP
(r = 0.5, lambda = 100, Z^alpha) and MP (lambda_MP = 1), with 1 and with 2 torch threads:

* one training iteration of R repetitions stacked into one model
  (:class:`~fusionlib.ptgan.stacked_step.StackedPTGANStep`), R in {1, 2, 5, 10}, against one
  iteration of one separate run (:class:`~fusionlib.ptgan.tabular.step.TabularPTGANStep`; R
  separate runs cost R of them). Reported per R: the stacked iteration's time over one separate
  iteration ("cost of R", target <= 2.5 at R = 10) and the throughput gain R / cost. Every
  configuration runs ``iters`` iterations per round; rounds are interleaved (order reversed every
  other round) and the minimum over rounds is kept, wall time and process CPU time alike;
* the PT+CP / MP speed ratio of one separate run (both penalties differentiate the critic's
  input gradient a second time);
* where the time of a stacked R = 10 iteration goes (``torch.profiler``, self CPU time by
  operation, grouped);
* the arithmetic floor of the target: the floating-point operations of one stacked R = 10
  iteration (``torch.utils.flop_counter``, matrix products only) at the rate this core reaches
  on a large single-precision matrix product (one thread), as a multiple of one separate
  iteration's wall time -- what "R = 10 for at most 2.5 separate iterations" leaves for
  everything else (``--floor`` runs this part alone);
* whether ``torch.compile`` runs one stacked R = 10 iteration (it refuses: both penalties need
  double backward, which AOTAutograd does not support) and the compile seconds spent;
* one evaluation point of one repetition (1,000 samples, RF + SVM + LR fitted and scored on
  D_test) and the share of wall time the paper protocol (50 points over 57,000 iterations, 10
  stacked repetitions) spends evaluating.

Writes benchmarks/results/ptgan_tabular.json atomically.

    python benchmarks/bench_ptgan_tabular.py [--rounds 3] [--iters 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import torch
from _floor import peak_gflops  # benchmarks/_floor.py (the script folder is on sys.path)
from torch.utils._python_dispatch import TorchDispatchMode

from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.networks import tabular_networks
from fusionlib.gan.stacked_networks import StackedCritic, StackedGenerator
from fusionlib.gan.trainer import Trainer, torch_threads
from fusionlib.io import atomic_write_json
from fusionlib.ptgan.stacked_step import StackedPTGANStep
from fusionlib.ptgan.tabular.cells import ITERATIONS
from fusionlib.ptgan.tabular.data import load_tabular
from fusionlib.ptgan.tabular.model import tabular_config
from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN
from fusionlib.ptgan.utility import DownstreamEvaluator, split_train_test
from fusionlib.rng import child

METHODS = {"pt+cp": None, "mp": {"penalty_weight": 1.0}}
REPS = (1, 2, 5, 10)
THREADS = (1, 2)
OUT = Path(__file__).resolve().parent / "results" / "ptgan_tabular.json"
GROUPS = {"matmul": ("bmm", "baddbmm", "mm", "addmm"), "adam": ("adam",),
          "relu": ("clamp_min", "threshold_backward", "relu"),
          "batch norm": ("batch_norm",), "copies": ("copy_", "cat", "stack", "index")}


def _trainers(x: torch.Tensor, method: str) -> dict:
    cfg = tabular_config(method, "nd", METHODS[method])
    enc = _trainers.encoder  # type: ignore[attr-defined]

    def nets(seed):
        head = TabularHead(64, enc.spans_, seed=child(seed, "head"))
        return tabular_networks(x.shape[1], conditional=cfg.conditional, seed=seed, head=head)

    from fusionlib.ptgan.tabular.step import TabularPTGANStep

    out = {"separate": Trainer(TabularPTGANStep(cfg, *nets(0)), seed=0, log_every=0)}
    for r in REPS:
        gs, cs = zip(*[nets(s) for s in range(r)], strict=True)
        step = StackedPTGANStep(cfg, StackedGenerator.from_generators(gs),
                                StackedCritic.from_critics(cs))
        out[r] = Trainer(step, seed=list(range(r)), log_every=0)
    for tr in out.values():
        tr.fit(x, 3)  # warm-up: allocator, fused kernels
    return out


def measure_steps(x: torch.Tensor, rounds: int, iters: int) -> dict:
    rows = []
    for method in METHODS:
        trainers = _trainers(x, method)
        batches = {k: tr.step.prepare(x, "cpu") for k, tr in trainers.items()}
        keys = [(k, th) for th in THREADS for k in trainers]
        best = {key: [float("inf"), float("inf")] for key in keys}
        for i in range(rounds):
            for key in keys if i % 2 == 0 else keys[::-1]:
                tr = trainers[key[0]]
                with torch_threads(key[1]):
                    w, c = time.perf_counter(), time.process_time()
                    for _ in range(iters):
                        tr._one(batches[key[0]])
                    best[key][0] = min(best[key][0], (time.perf_counter() - w) / iters)
                    best[key][1] = min(best[key][1], (time.process_time() - c) / iters)
        for th in THREADS:
            sep_w, sep_c = best[("separate", th)]
            for r in REPS:
                w, c = best[(r, th)]
                rows.append(dict(method=method, threads=th, R=r, stacked_ms=1e3 * w,
                                 separate_ms=1e3 * sep_w, cost_of_R=w / sep_w,
                                 throughput_gain=r * sep_w / w, cpu_cost_of_R=c / sep_c,
                                 it_per_s_per_rep=r / w))
    return {"rows": rows}


def profile_r10(x: torch.Tensor) -> dict:
    from torch.profiler import ProfilerActivity, profile

    out = {}
    for method in METHODS:
        tr = _trainers(x, method)[10]
        batch = tr.step.prepare(x, "cpu")
        with torch_threads(1), profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(10):
                tr._one(batch)
        events = [e for e in prof.key_averages() if e.key.startswith("aten::")
                  or "fused_adam" in e.key]
        total = sum(e.self_cpu_time_total for e in events)
        shares = {g: 0.0 for g in (*GROUPS, "other")}
        for e in events:
            name = e.key.split("::")[-1].lower()
            group = next((g for g, keys in GROUPS.items() if any(k in name for k in keys)),
                         "other")
            shares[group] += e.self_cpu_time_total / total
        top = sorted(events, key=lambda e: -e.self_cpu_time_total)[:8]
        out[method] = {"shares": shares, "ops_per_iteration": sum(e.count for e in events) / 10,
                       "top": {e.key: e.self_cpu_time_total / total for e in top}}
    return out


class _MatmulFlops(TorchDispatchMode):
    """Counts the floating-point operations of the matrix products dispatched inside it
    (``torch.utils.flop_counter.FlopCounterMode`` tracks modules with hooks that
    ``autograd.grad``, used by the gradient penalties, does not support)."""

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in ("mm", "addmm", "bmm", "baddbmm"):
            a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
            batch = a.shape[0] if a.ndim == 3 else 1
            self.flops += 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
        return func(*args, **(kwargs or {}))


def compile_probe(x: torch.Tensor) -> dict:
    """Whether ``torch.compile`` (the issue's first route to fewer, fused operations) can run
    one stacked R = 10 iteration, per method, and how long it tried. Both penalties
    differentiate the critic's input gradient a second time, and AOTAutograd (what
    ``torch.compile`` uses for training graphs) refuses double backward, so on torch 2.13 this
    records the refusal and the compile time spent before it."""
    out = {}
    for method in METHODS:
        tr = _trainers(x, method)[10]
        batch = tr.step.prepare(x, "cpu")
        torch._dynamo.reset()  # each method compiles from a cold cache
        start = time.perf_counter()
        try:
            with torch_threads(1):
                torch.compile(tr._one)(batch)
            out[method] = {"compiled": True, "seconds": time.perf_counter() - start}
        except Exception as e:  # noqa: BLE001 - the refusal is the measurement
            msg = (str(e).splitlines() or [""])[0]
            out[method] = {"compiled": False, "seconds": time.perf_counter() - start,
                           "double_backward": "double backward" in msg,
                           "error": f"{type(e).__name__}: {msg[:200]}"}
    return out


def arithmetic_floor(x: torch.Tensor, separate_ms: dict[str, float] | None = None,
                     rounds: int = 3, iters: int = 10) -> dict:
    """FLOPs of one R = 10 iteration at this core's peak matrix rate, in separate iterations."""
    peak = peak_gflops()
    out = {"peak_gflops_1_thread": peak}
    for method in METHODS:
        trainers = _trainers(x, method)
        batches = {k: tr.step.prepare(x, "cpu") for k, tr in trainers.items()}
        flops = {}
        for key in ("separate", 10):
            with _MatmulFlops() as counter:
                trainers[key]._one(batches[key])
            flops[key] = counter.flops
        sep = (separate_ms or {}).get(method)
        if sep is None:
            best = float("inf")
            with torch_threads(1):
                for _ in range(rounds):
                    start = time.perf_counter()
                    for _ in range(iters):
                        trainers["separate"]._one(batches["separate"])
                    best = min(best, (time.perf_counter() - start) / iters)
            sep = 1e3 * best
        floor_ms = flops[10] / peak / 1e6
        out[method] = {"gflop_per_separate_iteration": flops["separate"] / 1e9,
                       "gflop_per_r10_iteration": flops[10] / 1e9, "separate_ms": sep,
                       "r10_matmul_floor_ms": floor_ms,
                       "r10_floor_in_separate_iterations": floor_ms / sep,
                       "separate_matmul_share_at_peak": flops["separate"] / peak / 1e6 / sep}
    return out


def measure_evaluation(data, train, test, repeats: int = 3) -> float:
    model = StackedTabularPTGAN("mp", seeds=[0], discrete_columns=data.discrete_columns,
                                n_iter=20, overrides=METHODS["mp"]).fit(train)
    ev = DownstreamEvaluator(train, test, data.target, data.discrete_columns)
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        ev.auc(model.sample(1_000, [i])[0], i)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--floor", action="store_true",
                        help="only the arithmetic floor (prints it; writes nothing)")
    args = parser.parse_args()
    data = load_tabular("adult")
    train, test = split_train_test(data.frame, 0)
    enc = TabularEncoder(data.discrete_columns).fit(train)
    _trainers.encoder = enc  # type: ignore[attr-defined]
    x = torch.as_tensor(enc.transform(train)).float()
    if args.floor:
        print(arithmetic_floor(x, rounds=args.rounds, iters=args.iters))
        return
    steps = measure_steps(x, args.rounds, args.iters)
    sep = {r["method"]: r["separate_ms"] for r in steps["rows"] if r["threads"] == 1}
    eval_s = measure_evaluation(data, train, test)
    r10 = {r["method"]: r["stacked_ms"] / 1e3 for r in steps["rows"]
           if r["threads"] == 1 and r["R"] == 10}
    share = {m: 10 * 50 * eval_s / (ITERATIONS["adult"] * t + 10 * 50 * eval_s)
             for m, t in r10.items()}
    result = {**steps, "pt+cp_over_mp_time": sep["pt+cp"] / sep["mp"],
              "profile_r10": profile_r10(x), "arithmetic_floor": arithmetic_floor(x, sep),
              "torch_compile_r10": compile_probe(x),
              "seconds_per_evaluation_point": eval_s,
              "paper_protocol_evaluation_share_r10": share, "rounds": args.rounds,
              "iters": args.iters, "machine": platform.platform(), "cpus": os.cpu_count(),
              "load_average": os.getloadavg(), "torch": torch.__version__}
    atomic_write_json(OUT, result)
    print(f"{'method':6} {'thr':>3} {'R':>3} {'stacked ms':>10} {'separate ms':>11} "
          f"{'cost of R':>9} {'gain':>5} {'cpu cost':>8}")
    for r in steps["rows"]:
        print(f"{r['method']:6} {r['threads']:>3} {r['R']:>3} {r['stacked_ms']:>10.2f} "
              f"{r['separate_ms']:>11.2f} {r['cost_of_R']:>9.2f} {r['throughput_gain']:>5.2f} "
              f"{r['cpu_cost_of_R']:>8.2f}")
    for k in ("pt+cp_over_mp_time", "profile_r10", "arithmetic_floor", "torch_compile_r10",
              "seconds_per_evaluation_point", "paper_protocol_evaluation_share_r10",
              "load_average"):
        print(f"{k}: {result[k]}")


if __name__ == "__main__":
    main()
