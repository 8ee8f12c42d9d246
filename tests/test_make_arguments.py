"""`make` refuses bad SCALE / SEED / JOBS / TORCH values with one clear line, before any work.

``make book JOBS=0`` started every cell at once (Snakemake's -j 0), ``SEED=abc`` gave a
Snakefile traceback and ``TORCH=bogus`` a make error about a missing lock file.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = ROOT / ".venv" / "workflow" / "bin" / "snakemake"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _make(*args: str) -> subprocess.CompletedProcess:
    # a make of its own, not a sub-make of the `make test` that runs these tests: with MAKELEVEL
    # inherited, make names itself "make[1]:" in its messages and passes MAKEFLAGS down
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=60, env=env)


@pytest.mark.parametrize("arg, message", [
    ("JOBS=0", "JOBS=0 is not allowed; give a number of parallel jobs >= 1"),
    ("JOBS=-2", "JOBS=-2 is not allowed"), ("JOBS=two", "JOBS=two is not allowed"),
    ("SEED=abc", "SEED=abc is not allowed; give an integer >= 0"),
    ("SEED=-1", "SEED=-1 is not allowed"), ("SEED=1.5", "SEED=1.5 is not allowed"),
    ("SCALE=huge", "SCALE=huge is not allowed"),
])
def test_bad_workflow_arguments_are_refused_before_any_work(arg, message):
    done = _make("-s", "check-scale", arg)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize("arg", ["JOBS=1", "JOBS=16", "SEED=0", "SEED=12345", "SCALE=smoke"])
def test_good_workflow_arguments_pass(arg):
    assert _make("-s", "check-scale", arg).returncode == 0


@pytest.mark.parametrize("arg, message", [
    ("TEST_WORKERS=", "TEST_WORKERS= is not allowed; give a number of pytest processes"),
    ("TEST_WORKERS=-1", "TEST_WORKERS=-1 is not allowed"),
    ("TEST_WORKERS=two", "TEST_WORKERS=two is not allowed"),
])
def test_a_bad_number_of_test_workers_is_refused_before_any_work(arg, message):
    done = _make("-s", "check-test-workers", arg)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize("arg", ["TEST_WORKERS=0", "TEST_WORKERS=2", "TEST_WORKERS=auto"])
def test_good_numbers_of_test_workers_pass(arg):
    assert _make("-s", "check-test-workers", arg).returncode == 0


@pytest.mark.parametrize("arg, message", [
    ("BUDGET=0", "BUDGET=0 is not allowed; give a positive number of minutes, e.g. BUDGET=60"),
    ("BUDGET=-5", "BUDGET=-5 is not allowed"), ("BUDGET=abc", "BUDGET=abc is not allowed"),
    ("BUDGET=1e3", "BUDGET=1e3 is not allowed"), ("BUDGET=", "give the budget in minutes"),
    ("BUDGET=1'2", "BUDGET=1'2 is not allowed"), ('BUDGET=1"; ls', 'BUDGET=1"; ls is not allowed'),
])
def test_a_bad_budget_is_refused_in_one_line(arg, message):
    done = _make("-s", "check-budget", arg)
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.count("error:") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("arg", ["BUDGET=60", "BUDGET=2.5", "BUDGET=.5"])
def test_a_positive_budget_passes(arg):
    assert _make("-s", "check-budget", arg).returncode == 0


@pytest.mark.parametrize("arg", ["ONLY=nope", "ONLY=ptgan_tabular fairptgan", "ONLY=PTGAN_TABULAR",
                                 "ONLY=a'b"])
def test_only_names_one_known_experiment(arg):
    done = _make("-s", "check-paper", arg)
    assert done.returncode == 2
    assert f"{arg} is not allowed; use one of: ptgan_ring " in done.stderr
    assert "ptgan_tabular" in done.stderr.split("use one of:")[1]


@pytest.mark.parametrize("arg", ["ONLY=ptgan_tabular", "ONLY=ptgan_images_paper", "ONLY="])
def test_a_known_experiment_passes(arg):
    assert _make("-s", "check-paper", arg).returncode == 0


@pytest.mark.parametrize("target", ["paper-cells", "paper-gpu"])
def test_the_paper_targets_check_their_arguments_before_any_work(target):
    for arg, message in (("BUDGET=0", "BUDGET=0 is not allowed"),
                         ("ONLY=nope", "ONLY=nope is not allowed")):
        # the checks are the first prerequisites: the refusal comes before env, data, bundles
        done = _make("-s", target, "BUDGET=30", arg)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert done.stdout == ""


@pytest.mark.parametrize("target", ["env", "book", "help"])
def test_an_unknown_torch_build_is_named_not_a_missing_lock_file(target):
    done = _make("-n", target, "TORCH=bogus")
    assert done.returncode == 2
    assert "TORCH=bogus is not allowed; use one of: cpu cuda" in done.stderr
    assert "No rule to make target" not in done.stderr and "cat:" not in done.stderr


def _recipe(output: str, start: str) -> str:
    """The recipe that ``make -n`` printed from its line starting with ``start`` to the end of
    its backslash-continued lines."""
    lines = output.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    out = []
    for line in lines[first:]:
        out.append(line)
        if not line.endswith("\\"):
            break
    return "\n".join(out)


def _shell_ok(script: str) -> None:
    done = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert done.returncode == 0, done.stderr + script


@pytest.mark.parametrize("arg, message", [
    ("ID=--help", "error: ID=--help is not a claim id (ids do not start with \"-\""),
    ("ID=-x y", "error: ID=-x y is not a claim id"),
    ("ID=", "error: name the claim: make claim ID=<claim id>"),
])
def test_a_claim_id_that_is_empty_or_an_option_is_refused_before_any_work(arg, message):
    # ID=--help reached the recompute module as its --help: the usage text became the chapter
    # that Snakemake was asked to run
    done = _make("-s", "check-claim", arg)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len([ln for ln in done.stderr.splitlines() if not re.match(r"make(\[\d+\])?:", ln)]) == 1


@pytest.mark.parametrize("claim_id", ["it's", "a'b'c", 'say "x"', "a b", "`touch x`; x"])
def test_a_claim_id_is_one_shell_word_whatever_its_quotes(claim_id):
    """A ' in ID= broke the recipe's quoting ('$(ID)'); the id now reaches the module as one
    argument, after `--`, in every command of the recipe."""
    assert _make("-s", "check-claim", f"ID={claim_id}").returncode == 0
    done = _make("-n", "-s", "claim", f"ID={claim_id}", "SNAKEMAKE=snakemake")
    assert done.returncode == 0, done.stderr
    recipe = _recipe(done.stdout, "chapter=$(")
    _shell_ok(recipe)
    for action in ("locate", "show"):
        line = next(ln for ln in recipe.splitlines() if f"recompute {action}" in ln)
        words = shlex.split(line.split(f"recompute {action}", 1)[1].split(")")[0]
                            if action == "locate" else line.split(f"recompute {action}", 1)[1])
        assert words == ["--", claim_id], (action, line)


@pytest.mark.parametrize("bundle", ["it's.tar.gz", "results/bundles/a b'c.tar.gz",
                                    "-odd.tar.gz"])
def test_a_bundle_path_is_one_shell_word_whatever_its_quotes(bundle):
    done = _make("-n", "-s", "export-results", f"BUNDLE={bundle}", "SCALE=smoke")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "cells export" in ln)
    _shell_ok(line)
    assert shlex.split(line)[-1] == f"--out={bundle}"
    done = _make("-n", "-s", "import-results", f"BUNDLE={bundle}")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "cells import" in ln)
    _shell_ok(done.stdout)
    assert shlex.split(line)[-2:] == ["--", bundle]


def test_only_and_cells_reach_export_results_one_word_each():
    done = _make("-n", "-s", "export-results", "SCALE=paper", "ONLY=ptgan_var_noise",
                 "CELLS=fig8-*-rep-1 it's-*", "BUNDLE=b.tar.gz")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if "cells export" in ln)
    _shell_ok(line)
    words = shlex.split(line)
    assert words[words.index("export"):] == [
        "export", "--scale", "paper", "--seed", "0", "--out=b.tar.gz",
        "--experiment=ptgan_var_noise", "--cell=fig8-*-rep-1", "--cell=it's-*"]


@pytest.mark.parametrize("seeds, message", [
    ("0 00", "error: SEEDS=\"0 00\" names root seed 0 twice ('00'); give each seed once"),
    ("1 2 01", "names root seed 1 twice ('01')"),
    ("3 3", "names root seed 3 twice ('3')"),
    ("0 x", "error: SEEDS=\"0 x\" is not allowed: 'x' is not an integer >= 0"),
    ("0 -1", "'-1' is not an integer >= 0"),
    ("0 1; touch /tmp/x", "'1;' is not an integer >= 0"),
    ("", "error: SEEDS is empty"),
])
def test_duplicate_or_bad_seeds_are_refused_before_anything_runs(seeds, message):
    """`make stability SEEDS="0 00"` re-ran all 13 chapters: 00 is seed 0, but as text it was
    not the book's seed, so its chapters went to a second folder."""
    done = _make("-s", "check-seeds", f"SEEDS={seeds}")
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len([ln for ln in done.stderr.splitlines() if not re.match(r"make(\[\d+\])?:", ln)]) == 1
    # and `make stability` stops there, before env, data and Snakemake (all made to fail here)
    done = _make("-s", "stability", f"SEEDS={seeds}", "PY=false", "SNAKEMAKE=false",
                 "PYTHON=false", "WORKFLOW_VENV=/nonexistent")
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Error 1" not in done.stderr


@pytest.mark.parametrize("seeds", ["0 1 2", "7", "0 10 100", " 1  2 "])
def test_distinct_seeds_pass(seeds):
    assert _make("-s", "check-seeds", f"SEEDS={seeds}").returncode == 0


def test_stability_runs_each_seed_as_an_integer_and_the_books_seed_in_place():
    # the recipe as make prints it (nothing runs), then run with echo for Snakemake and python
    done = _make("-n", "-s", "stability", "SEEDS=00 1 007", "SEED=0", "SNAKEMAKE=echo",
                 "PY=echo")
    assert done.returncode == 0, done.stderr
    recipe = done.stdout[done.stdout.index("set -ef; seeds="):]
    ran = subprocess.run(["bash", "-c", recipe], text=True, capture_output=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    runs = [ln for ln in ran.stdout.splitlines() if ln.startswith("notebooks ")]
    assert [ln.split(" executed=")[1] for ln in runs] == [
        "book/executed", "results/stability/cpu/seed-1", "results/stability/cpu/seed-7"]
    assert [ln.split(" seed=")[1].split()[0] for ln in runs] == ["0", "1", "7"]
    assert "--seed-dir 0=book/executed --seed-dir 1=results/stability/cpu/seed-1" in ran.stdout


NEEDS_SNAKEMAKE = pytest.mark.skipif(not SNAKEMAKE.is_file(),
                                     reason="needs the workflow venv (make workflow-env)")


@NEEDS_SNAKEMAKE
@pytest.mark.parametrize("seed, why", [("abc", "'abc' is not of type 'integer'"),
                                       ("-1", "-1 is less than the minimum of 0"),
                                       ("1.5", "1.5 is not of type 'integer'")])
def test_the_snakefile_names_a_bad_seed_without_a_conversion_traceback(seed, why):
    done = subprocess.run([str(SNAKEMAKE), "-s", "workflow/Snakefile", "-n", "--config",
                           f"seed={seed}"], cwd=ROOT, text=True, capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"config seed: {why} (allowed: root seed of every random stream: an integer >= 0)" \
        in _one_line_error(out)
    assert "invalid literal" not in out


def _one_line_error(out: str) -> str:
    """The error of a Snakemake run that stopped on its configuration: exactly one line that
    starts with ``config`` and no traceback (an exception raised by the Snakefile printed the
    message and then its File "...", line ... frames)."""
    assert 'File "' not in out and "Traceback" not in out and "Error in file" not in out, out
    lines = [line for line in out.splitlines() if line.startswith("config ")]
    assert len(lines) == 1, out
    assert lines[0].endswith("Fix it in workflow/config.yaml or in --config (make: SCALE=, "
                             "SEED=)"), lines[0]
    return lines[0]


def _dry_run(*config: str) -> str:
    done = subprocess.run([str(SNAKEMAKE), "-s", "workflow/Snakefile", "-n", "--config",
                           *config], cwd=ROOT, text=True, capture_output=True, timeout=300)
    assert done.returncode != 0
    return _one_line_error(done.stdout + done.stderr)


# every key of workflow/config.yaml (and of --config): a bad value is one line naming the key,
# the value and what is allowed. `python=` gave a 6-line traceback (FileNotFoundError from the
# plan's subprocess); a misspelt experiment was reported through the notebooks key
# ("config notebooks.ptgan_toys: 'ptgan_ring' is not in config experiments")
BAD_CONFIG = [
    ("scale=huge", "config scale: 'huge' is not one of ['smoke', 'cpu', 'paper'] (allowed: "
                   "smoke, cpu or paper"),
    ("seed=-1", "config seed: -1 is less than the minimum of 0 (allowed: root seed"),
    ("python=/nonexistent/python", "config python='/nonexistent/python': no executable file "
                                   "there; give the interpreter of an environment with "
                                   "fusionlib installed, e.g. python="),
    ("force=maybe", "config force: 'maybe' is not one of"),
    ("executed=/tmp/x", "config executed='/tmp/x' must be a folder inside the checkout"),
    ("batch=3/2", "config batch='3/2': give i/n with 1 <= i <= n, e.g. batch=1/8"),
    ("batch=one", "config batch: 'one' does not match"),
    ("slurm_partition=[a, b]", "config slurm_partition: ['a', 'b'] is not of type 'string', "
                               "'null' (allowed: Slurm partition"),
    ("slurm_gpu_partition=7", "config slurm_gpu_partition: 7 is not of type 'string'"),
    ("experiments=[Bad-Name]", "config experiments.0: 'Bad-Name' does not match"),
    ("notebooks={nope: []}", "config notebooks.nope: there is no notebooks/nope.md (allowed: "
                             "the notebooks benchmark, data,"),
    ("defaults=oops", "config defaults: 'oops' is not of type 'object' (allowed: type object"),
    ("resources={ptgan_ring: {huge: {gpu: 1}}}", "config resources.ptgan_ring: Additional "
                                                 "properties are not allowed ('huge' was "
                                                 "unexpected) (allowed: the keys smoke, cpu, "
                                                 "paper"),
    ("sclae=smoke", "config (top level): Additional properties are not allowed ('sclae' was "
                    "unexpected) (allowed: the keys scale, seed, python, force,"),
]


@NEEDS_SNAKEMAKE
@pytest.mark.parametrize("arg, message", BAD_CONFIG, ids=[a.split("=")[0] + "-" + str(i)
                                                          for i, (a, _) in
                                                          enumerate(BAD_CONFIG)])
def test_every_config_key_reports_a_bad_value_in_one_line(arg, message):
    line = _dry_run(arg)
    assert line.startswith(message), line


@NEEDS_SNAKEMAKE
def test_an_interpreter_without_fusionlib_is_named_as_config_python():
    # Snakemake's own interpreter: it imports the checkout's fusionlib (cwd), not torch
    python = SNAKEMAKE.parent / "python"
    line = _dry_run(f"python={python}")
    assert line.startswith(f"config python={str(python)!r}: this interpreter cannot import "
                           "fusionlib (No module named "), line


@NEEDS_SNAKEMAKE
def test_a_misspelt_experiment_is_named_under_its_own_key():
    line = _dry_run("experiments=[ptgan_rnig, ptgan_mixup]")
    assert line.startswith("config experiments: 'ptgan_rnig' is not an experiment of fusionlib "
                           "(allowed: benchmark, "), line
    assert "ptgan_ring" in line and "notebooks" not in line
    # a real experiment that a notebook reads but the list leaves out: the notebooks key
    line = _dry_run("experiments=[ptgan_ring, ptgan_mixup]", "scale=smoke")
    assert line.startswith("config notebooks."), line
    assert "is not in config experiments (allowed: the experiments listed there, ptgan_ring, " \
        "ptgan_mixup)" in line


@NEEDS_SNAKEMAKE
def test_a_plain_snakemake_call_uses_the_workflow_profile_and_the_config_schema():
    """`snakemake` with no -s and no --profile, as a Snakemake user types it: the workflow
    profile (the rerun triggers and scheduler of make) is read, and the config is validated
    against workflow/schemas/config.schema.yaml (an unknown key is named)."""
    done = subprocess.run([str(SNAKEMAKE), "-n", "--config", "sclae=smoke"], cwd=ROOT,
                          text=True, capture_output=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "workflow specific profile workflow/profiles/default" in out
    assert "config (top level): Additional properties are not allowed ('sclae' was " \
        "unexpected)" in out


def test_the_workflow_profile_sets_what_make_relies_on_and_every_job_has_a_log():
    import yaml

    profile = yaml.safe_load((ROOT / "workflow/profiles/default/config.yaml").read_text())
    assert profile["rerun-triggers"] == ["mtime"] and profile["scheduler"] == "greedy"
    # a cluster profile must not set what the workflow profile would override per key
    for name in ("local", "slurm", "kubernetes"):
        other = yaml.safe_load((ROOT / f"workflow/profiles/{name}/config.yaml").read_text())
        assert not set(other) & {"rerun-triggers", "scheduler"}, name
    text = (ROOT / "workflow/Snakefile").read_text()
    rules = re.split(r"^rule ", text, flags=re.M)[1:]
    with_commands = [r for r in rules if "\n    shell:" in r]
    assert len(with_commands) == 4
    for r in with_commands:
        assert "\n    log:" in r, r.split(":", 1)[0]


def test_each_test_worker_gets_its_share_of_the_cores():
    from tests.conftest import _share_of_cores

    assert _share_of_cores("2", 2, None) == 1 and _share_of_cores("2", 16, None) == 8
    assert _share_of_cores("4", 2, None) == 1  # never 0 threads
    assert _share_of_cores(None, 8, None) is None  # one process: torch's default
    assert _share_of_cores("2", 8, "3") is None  # the caller's OMP_NUM_THREADS is kept
