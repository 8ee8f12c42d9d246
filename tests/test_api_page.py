"""The API reference page documents every public module of fusionlib."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from apimodules import _escape, public_modules  # noqa: E402


def test_every_public_module_is_on_the_api_page():
    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    listed = [name for line in re.findall(r"\.\. api-modules:: (.+)", text)
              for name in line.split()]
    documented = {m for name in listed for m in public_modules(name)}
    every = {".".join(p.relative_to(ROOT).with_suffix("").parts)
             for p in (ROOT / "fusionlib").rglob("*.py")
             if not any(part.startswith("_") for part in p.relative_to(ROOT).parts)}
    assert every - documented == set()


def test_plain_text_markup_is_escaped_outside_literals():
    assert _escape("|V_k| rows of ``fit_``") == r"\|V_k\| rows of ``fit_``"
    assert _escape("fitted attributes end in _ like columns_.") == \
        r"fitted attributes end in _ like columns\_."
