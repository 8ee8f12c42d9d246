"""Where `make env` gets torch (tools/torch_source.py), without network.

`make env` installed torch only from a local wheel folder holding ``torch==2.13.0+cpu`` (pip's
find-links /opt/wheels on the project's machines), a build that is not on PyPI: anywhere else
it failed inside pip. Now: a local wheel folder when one holds the pinned file, else PyTorch's
own CPU index (``--extra-index-url``, for the torch lock alone), else a message that says what
to do. The GPU workflow's jobs take a path that exists on a public runner.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WHEEL = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"


@pytest.fixture(scope="module")
def ts():
    spec = importlib.util.spec_from_file_location("torch_source", ROOT / "tools" /
                                                  "torch_source.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


@pytest.fixture()
def lock(tmp_path):
    """A CPU lock pinning the small stand-in wheel ``wheels/<WHEEL>`` by its sha256."""
    content = b"a stand-in for the 190 MB wheel"
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / WHEEL).write_bytes(content)
    path = tmp_path / "requirements-torch-cpu.lock"
    path.write_text("# the CPU build\ntorch==2.13.0+cpu \\\n    --hash=sha256:"
                    f"{hashlib.sha256(content).hexdigest()}\n")
    return path


def never() -> tuple[bool, str]:
    raise AssertionError("the index must not be asked")


def unreachable() -> tuple[bool, str]:
    return False, "[Errno -2] Name or service not known"


def resolve(ts, lock, *, folders=(), config="", reachable=never, source="auto", **kw):
    return ts.resolve("cpu", source, lock=lock, wheel_folders=[Path(f) for f in folders],
                      pip_config=config, reachable=reachable, **kw)


def test_the_real_cpu_lock_pins_one_file_of_the_cpu_build(ts):
    (pin,) = ts.read_lock(ROOT / "requirements-torch-cpu.lock")
    assert (pin.name, pin.version, len(pin.hashes)) == ("torch", "2.13.0+cpu", 1)


def test_pip_config_find_links_and_no_index_are_read(ts):
    config = ("global.cert='/etc/ssl/certs/ca-certificates.crt'\n"
              "global.extra-index-url='file:///opt/pypi/simple'\n"
              "global.find-links='/opt/wheels file:///srv/more https://example.org/wheels'\n"
              ":env:.find-links='/opt/wheels'\n")
    assert ts.find_links(config) == [Path("/opt/wheels"), Path("/srv/more")]
    assert not ts.no_index(config)
    assert ts.no_index(config + "global.no-index='true'\n")


def test_a_wheel_folder_of_pips_config_holding_the_pinned_file_comes_first(ts, lock):
    folder = lock.parent / "wheels"
    choice = resolve(ts, lock, config=f"global.find-links='{folder}'\n")
    assert choice.kind == "local"
    assert choice.args == ("--find-links", str(folder), "-r", str(lock))
    assert choice.message == f"torch 2.13.0+cpu ({lock.name}): the hash-pinned wheel in {folder}"


def test_a_folder_given_with_torch_wheels_is_looked_at_too(ts, lock):
    folder = lock.parent / "wheels"
    choice = resolve(ts, lock, folders=[folder], config="global.find-links='/nowhere'\n")
    assert choice.kind == "local" and choice.args[:2] == ("--find-links", str(folder))


def test_a_wheel_with_another_hash_is_not_the_pinned_file(ts, lock, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / WHEEL).write_bytes(b"a different build")
    choice = resolve(ts, lock, folders=[other], reachable=lambda: (True, "HTTP 200"))
    assert choice.kind == "index"
    with pytest.raises(ts.NoSource, match=r"has another sha256 than the lock's"):
        resolve(ts, lock, folders=[other], source="local")


def test_without_a_wheel_folder_pytorchs_cpu_index_for_the_torch_lock_alone(ts, lock,
                                                                             tmp_path):
    asked = []
    choice = resolve(ts, lock, folders=[tmp_path / "empty"],
                     reachable=lambda: asked.append(1) or (True, "HTTP 200"))
    assert asked == [1] and choice.kind == "index"
    assert choice.args == ("--extra-index-url", "https://download.pytorch.org/whl/cpu", "-r",
                           str(lock))
    assert "from PyTorch's CPU index https://download.pytorch.org/whl/cpu (hash-pinned)" in \
        choice.message


def test_with_no_source_it_says_exactly_what_to_do(ts, lock, tmp_path):
    with pytest.raises(ts.NoSource) as err:
        resolve(ts, lock, folders=[tmp_path / "empty"], reachable=unreachable)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"torch 2.13.0+cpu ({lock.name}) is not on PyPI, no wheel folder here "
                          f"holds {WHEEL} (looked in: {tmp_path / 'empty'}) and PyTorch's CPU "
                          "index https://download.pytorch.org/whl/cpu cannot be used ([Errno -2] "
                          "Name or service not known)")
    (pin,) = ts.read_lock(lock)
    assert f"download {WHEEL} from https://download.pytorch.org/whl/cpu/torch/ (sha256 " \
        f"{min(pin.hashes)}) into a folder and run `make env TORCH_WHEELS=<that folder>`" in msg
    assert msg.endswith("install PyPI's CUDA build instead: `make env TORCH=cuda`")


def test_pip_configured_without_an_index_is_not_sent_to_one(ts, lock):
    with pytest.raises(ts.NoSource, match="pip's configuration says no-index"):
        resolve(ts, lock, config="global.no-index='1'\n")


def test_a_forced_source(ts, lock):
    assert resolve(ts, lock, source="index").kind == "index"  # not asked: the CPU CI job
    with pytest.raises(ts.NoSource, match=r"no wheel folder here holds the pinned .*TORCH=cuda"):
        resolve(ts, lock, source="local")
    with pytest.raises(ts.NoSource, match="TORCH_SOURCE=pypi is not allowed; use one of: auto "
                                          "local index"):
        resolve(ts, lock, source="pypi")


def test_the_cuda_build_is_pypis(ts, tmp_path):
    cuda = ROOT / "requirements-torch-cuda.lock"
    choice = ts.resolve("cuda", "auto", lock=cuda, wheel_folders=[], pip_config="",
                        reachable=never)
    assert choice.kind == "pypi" and choice.args == ("-r", str(cuda))
    with pytest.raises(ts.NoSource, match="TORCH=rocm is not allowed"):
        ts.resolve("rocm", "auto", lock=cuda, wheel_folders=[], pip_config="", reachable=never)


def test_another_platform_is_told_that_the_lock_pins_one_file(ts, lock):
    with pytest.raises(ts.NoSource, match=r"pins one file, torch-2.13.0\+cpu-cp311-cp311-"
                       r"manylinux_2_28_x86_64.whl, built for Linux x86_64 and Python 3.11; "
                       r"this is Darwin arm64 with Python 3.12"):
        resolve(ts, lock, machine=("Darwin", "arm64", (3, 12)))


def test_the_command_prints_pip_arguments_and_exits_2_with_the_message(ts, lock, tmp_path,
                                                                     monkeypatch, capsys):
    monkeypatch.setattr(ts, "pip_config_list", lambda: "")
    monkeypatch.setattr(ts, "this_platform", lambda: ts.CPU_PLATFORM)
    monkeypatch.setattr(ts, "index_reachable", unreachable)
    assert ts.main(["--lock", str(lock), "--wheels", str(lock.parent / "wheels")]) == 0
    out, err = capsys.readouterr()
    assert shlex.split(out) == ["--find-links", str(lock.parent / "wheels"), "-r", str(lock)]
    assert "the hash-pinned wheel in" in err
    assert ts.main(["--lock", str(lock)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: torch 2.13.0+cpu") and "TORCH=cuda" in err


def test_make_env_installs_torch_from_the_chosen_source_then_the_rest():
    text = (ROOT / "Makefile").read_text()
    recipe = text[text.index("$(STAMP): $(LOCKS)"):text.index("\nenv: $(STAMP)")]
    assert "tools/torch_source.py --torch $(TORCH) --source" in recipe
    assert "pip install --quiet --require-hashes --no-deps $$torch" in recipe
    # the torch call comes first, alone: its extra index serves the torch lock only
    assert recipe.index("torch_source.py") < recipe.index("-r requirements.lock")
    assert "TORCH_SOURCE ?= auto" in text


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def test_every_job_of_the_gpu_workflow_installs_torch_from_a_public_source():
    """The paper-scale workflow's jobs ran `make env` / `make book` with the default
    TORCH=cpu, whose wheel a public runner does not have."""
    doc = yaml.safe_load((ROOT / ".github/workflows/paper-scale.yml").read_text())
    checked = 0
    for name, job in doc["jobs"].items():
        runs = [s["run"] for s in _steps(job) if "run" in s]
        makes = [r for r in runs if re.search(r"\bmake (env|book|data|cells|workflow-env)\b", r)]
        if not makes:
            continue
        checked += 1
        first = makes[0]
        assert "make env" in first, (name, first)
        assert "TORCH=cuda" in first or "TORCH_SOURCE=index" in first, (name, first)
        setup = [s for s in _steps(job) if str(s.get("uses", "")).startswith(
            "actions/setup-python@")]
        assert setup and str(setup[0]["with"]["python-version"]) == "3.11", name
    assert checked == 2
