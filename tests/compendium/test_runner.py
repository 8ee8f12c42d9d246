from __future__ import annotations

from pathlib import Path

import pytest

from fusionlib.compendium.runner import fusionlib_dependencies, notebook_key, run_all
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
