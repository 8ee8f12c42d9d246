from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from fusionlib.compendium.runner import (
    fusionlib_dependencies,
    hide_parameter_cells,
    notebook_key,
    run_all,
)
from fusionlib.errors import InvalidInputError

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Tiny
"""

PARAMS = """
```{code-cell} ipython3
:tags: [parameters]
scale = "cpu"
results_dir = None
```
"""


def _write(path: Path, body: str, params: bool = True) -> Path:
    path.write_text(HEADER + (PARAMS if params else "") + body)
    return path


BODY = """
```{code-cell} ipython3
from pathlib import Path
Path(results_dir).mkdir(parents=True, exist_ok=True)
(Path(results_dir) / "out.txt").write_text(scale)
```
"""


def test_key_changes_with_source_scale_and_params(tmp_path):
    nb = _write(tmp_path / "a.md", BODY)
    k = notebook_key(nb, "smoke")
    assert k == notebook_key(nb, "smoke")
    assert k != notebook_key(nb, "cpu")
    assert k != notebook_key(nb, "smoke", {"seed": 1})
    _write(nb, BODY + "\n")
    assert k != notebook_key(nb, "smoke")


def test_dependencies_follow_imports_transitively():
    deps = fusionlib_dependencies("from fusionlib.encoding import TabularEncoder")
    assert "encoding/tabular.py" in deps and "errors.py" in deps and "__init__.py" in deps
    assert not any(d.startswith("gan/") for d in deps)


def test_dependencies_see_from_fusionlib_import_module():
    deps = fusionlib_dependencies("from fusionlib import rng\nfrom fusionlib.gan import step")
    assert "rng.py" in deps and "gan/step.py" in deps and "gan/__init__.py" in deps
    assert "checks.py" in deps  # rng imports checks


def test_dependencies_skip_neither_lists_nor_follows_the_skipped_modules():
    code = "from fusionlib.compendium.cells import results"
    full = fusionlib_dependencies(code)
    # the cell machinery imports the runner, which imports the claims machinery
    assert "compendium/cells/store.py" in full and "compendium/claims.py" in full
    cut = fusionlib_dependencies(code, skip=("fusionlib.compendium.cells",))
    assert not any(d.startswith("compendium/cells/") for d in cut)
    assert "compendium/claims.py" not in cut and "compendium/runner.py" not in cut
    assert "compendium/__init__.py" in cut  # the parent package is still imported
    # a module the code imports itself stays, even if the skipped modules import it too
    both = fusionlib_dependencies(code + "\nfrom fusionlib.compendium import claims",
                                  skip=("fusionlib.compendium.cells",))
    assert "compendium/claims.py" in both and "compendium/verdicts.py" in both
    assert "compendium/runner.py" not in both


@pytest.mark.notebook
def test_second_run_executes_nothing_and_failure_keeps_previous_output(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    nb = _write(src / "tiny.md", BODY)
    assert run_all([nb], out, "smoke") == {"tiny": "ran"}
    assert (out / "tiny" / "out.txt").read_text() == "smoke"
    assert run_all([nb], out, "smoke") == {"tiny": "up to date"}
    before = (out / "tiny.ipynb").read_bytes()
    _write(nb, BODY + "\n```{code-cell} ipython3\nraise RuntimeError('broken cell')\n```\n")
    with pytest.raises(RuntimeError, match="broken cell"):
        run_all([nb], out, "smoke")
    assert (out / "tiny.ipynb").read_bytes() == before  # previous output kept
    assert (out / "_failed" / "tiny.ipynb").is_file()
    assert not (out / "tiny.stamp.json").exists()  # so the next run retries


def test_notebook_without_parameters_cell_is_refused(tmp_path):
    nb = _write(tmp_path / "np.md", BODY, params=False)
    with pytest.raises(RuntimeError, match="parameters"):
        run_all([nb], tmp_path / "out", "smoke")


def test_bad_scale_is_refused(tmp_path):
    nb = _write(tmp_path / "a.md", BODY)
    with pytest.raises(InvalidInputError, match="smoke, cpu, paper"):
        run_all([nb], tmp_path / "out", "medium")


def _tags(nb) -> list[list[str]]:
    return [c.get("metadata", {}).get("tags", []) for c in nb.cells]


def test_parameter_cells_are_tagged_remove_cell_and_nothing_else():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("scale = 'cpu'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("# Parameters\nscale = 'smoke'",
                                  metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("y = 2"),
        nbformat.v4.new_markdown_cell("# parameters"),
    ])
    assert hide_parameter_cells(nb) == 2
    assert _tags(nb) == [["parameters", "remove-cell"], ["injected-parameters", "remove-cell"],
                         ["hide-input"], [], []]
    assert hide_parameter_cells(nb) == 2  # idempotent: no second tag
    assert _tags(nb)[0] == ["parameters", "remove-cell"]


@pytest.mark.notebook
def test_executed_notebook_hides_parameter_and_injected_cells(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    nb = _write(src / "tiny.md", BODY)
    run_all([nb], out, "smoke")
    executed = nbformat.read(out / "tiny.ipynb", as_version=4)
    by_tag = {t: "remove-cell" in tags for tags in _tags(executed) for t in tags
              if t != "remove-cell"}
    assert by_tag == {"parameters": True, "injected-parameters": True,
                      "chapter-summary": False, "hide-input": False}
    assert executed.cells[1].metadata["tags"] == ["chapter-summary"]  # the box under the title
    injected = next(c for c in executed.cells
                    if "injected-parameters" in c.metadata.get("tags", []))
    assert str(tmp_path) in injected.source  # the machine's path is in it: hence hidden
    body = [c for c in executed.cells if c.cell_type == "code"
            and c.metadata.get("tags") == ["hide-input"]]
    assert len(body) == 1 and "out.txt" in body[0].source  # the body is folded, not removed


SLOW = """
```{code-cell} ipython3
import time
from pathlib import Path
Path(results_dir).mkdir(parents=True, exist_ok=True)
(Path(results_dir) / "out.txt").write_text("partial " + scale)
(Path(results_dir).parent / "started.flag").write_text("x")
time.sleep(60)
```
"""


@pytest.mark.notebook
def test_a_killed_rerun_leaves_nothing_that_looks_finished(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    nb = _write(src / "tiny.md", BODY)
    assert run_all([nb], out, "smoke") == {"tiny": "ran"}  # a finished smoke run
    _write(nb, SLOW)  # the source changes: the next run re-executes, and is killed midway
    proc = subprocess.Popen(
        [sys.executable, "-m", "fusionlib.compendium.runner", str(nb), "--scale", "smoke",
         "--out", str(out)], start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not (out / "started.flag").exists() and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # the previous results are untouched, and no stamp claims the killed run finished
    assert (out / "tiny" / "out.txt").read_text() == "smoke"
    assert not (out / "tiny.stamp.json").exists()
    _write(nb, BODY)  # back to the finished source: it must run again, not be "up to date"
    assert run_all([nb], out, "smoke") == {"tiny": "ran"}


def test_the_runner_runs_only_what_it_is_named(capsys):
    """Scheduling the book is the workflow's job (workflow/Snakefile): no notebook named is a
    usage error, not "run everything"."""
    from fusionlib.compendium.runner import main

    with pytest.raises(SystemExit) as exc:
        main(["--scale", "smoke"])
    assert exc.value.code == 2 and "notebooks" in capsys.readouterr().err


def _fake_execute(calls):
    """A stand-in for papermill: writes the executed notebook and one result file."""
    def execute(path, out_dir, scale, params=None, *, timeout=None):
        calls.append(path.stem)
        (out_dir / path.stem).mkdir(parents=True, exist_ok=True)
        (out_dir / path.stem / "claims.csv").write_text("claim_id\n")
        (out_dir / f"{path.stem}.ipynb").write_text("{}")
        return out_dir / f"{path.stem}.ipynb"
    return execute


@pytest.mark.parametrize("remove", ["folder", "file"])
def test_deleted_results_make_a_notebook_stale_not_up_to_date(tmp_path, monkeypatch, remove):
    """The results are part of "done": a stamp without them must not hide the loss."""
    import shutil

    from fusionlib.compendium import runner
    from fusionlib.compendium.cells import notebook_status

    calls: list[str] = []
    monkeypatch.setattr(runner, "execute_notebook", _fake_execute(calls))
    nb, out = _write(tmp_path / "tiny.md", BODY), tmp_path / "out"
    assert run_all([nb], out, "smoke", params={"seed": 0}) == {"tiny": "ran"}
    assert run_all([nb], out, "smoke", params={"seed": 0}) == {"tiny": "up to date"}
    assert notebook_status(nb, "smoke", 0, out)[1] == "done"
    if remove == "folder":
        shutil.rmtree(out / "tiny")
    else:
        (out / "tiny" / "claims.csv").unlink()
    assert notebook_status(nb, "smoke", 0, out)[1] == "stale"
    assert run_all([nb], out, "smoke", params={"seed": 0}) == {"tiny": "ran"}
    assert calls == ["tiny", "tiny"]
    assert (out / "tiny" / "claims.csv").is_file()


@pytest.mark.parametrize("stamp", [b"\xff\xfe not json", b"[1, 2]", b"{\"key\": ", b""])
def test_an_unreadable_stamp_counts_as_stale(tmp_path, monkeypatch, stamp):
    from fusionlib.compendium import runner
    from fusionlib.compendium.cells import notebook_status

    calls: list[str] = []
    monkeypatch.setattr(runner, "execute_notebook", _fake_execute(calls))
    nb, out = _write(tmp_path / "tiny.md", BODY), tmp_path / "out"
    run_all([nb], out, "smoke", params={"seed": 0})
    (out / "tiny.stamp.json").write_bytes(stamp)
    assert notebook_status(nb, "smoke", 0, out)[1] == "stale"
    assert run_all([nb], out, "smoke", params={"seed": 0}) == {"tiny": "ran"}  # re-run, not a crash
    assert run_all([nb], out, "smoke", params={"seed": 0}) == {"tiny": "up to date"}
