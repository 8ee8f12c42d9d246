"""The API reference: one page per package, every public module on one of them, and no path of
the build machine in a signature; the header buttons' repository setting (book/_ext)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from apimodules import (  # noqa: E402
    _escape,
    public_modules,
    relative_paths,
    relative_signature,
    relative_signature_text,
    repository_roots,
)
from repository import UNSET, header_options, source_launch_url  # noqa: E402

API_PAGES = sorted((ROOT / "book" / "api").glob("*.md"))


def _listed(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [name for line in re.findall(r"\.\. api-modules:: (.+)", text)
            for name in line.split()]


def test_every_public_module_is_on_an_api_page():
    documented = [m for page in API_PAGES for name in _listed(page) for m in public_modules(name)]
    every = {".".join(p.relative_to(ROOT).with_suffix("").parts)
             for p in (ROOT / "fusionlib").rglob("*.py")
             if not any(part.startswith("_") for part in p.relative_to(ROOT).parts)}
    assert every - set(documented) == set()
    assert len(documented) == len(set(documented))  # each on one page only


def test_the_api_index_links_every_package_page_and_the_toc_lists_them():
    index = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert len(API_PAGES) >= 10
    assert _listed(ROOT / "book" / "api.md") == []  # the index documents nothing itself
    for page in API_PAGES:
        assert f"(api/{page.name})" in index
        assert f"file: book/api/{page.stem}\n" in toc


def test_plain_text_markup_is_escaped_outside_literals():
    assert _escape("|V_k| rows of ``fit_``") == r"\|V_k\| rows of ``fit_``"
    assert _escape("fitted attributes end in _ like columns_.") == \
        r"fitted attributes end in _ like columns\_."


def test_paths_under_the_checkout_are_shown_relative_to_it():
    roots = ("/build/repo",)
    assert relative_paths("(seed, root=PosixPath('/build/repo/fusionlib/compendium/paper_tables'))",
                          roots) == "(seed, root=Path('fusionlib/compendium/paper_tables'))"
    assert relative_paths('(cache="/build/repo/.cache/x", here=Path("/build/repo"))', roots) \
        == '(cache=".cache/x", here=Path("."))'
    # other absolute paths (system data) stay as they are
    assert relative_paths("(root='/usr/share/datasets/fashion-mnist')", roots) == \
        "(root='/usr/share/datasets/fashion-mnist')"


def test_autodoc_signatures_lose_the_checkout_path():
    from fusionlib.compendium import paper

    class App:
        srcdir = str(ROOT)

    roots = repository_roots(ROOT)
    assert str(ROOT) in roots and roots == tuple(sorted(roots, key=len, reverse=True))
    signature = f"(seed, name, root={paper.PAPER_TABLES!r})"
    assert str(ROOT) in signature or str(ROOT.resolve()) in signature
    new, ret = relative_signature(App(), "function", "paper_table", None, {}, signature, None)
    assert new == "(seed, name, root=Path('fusionlib/compendium/paper_tables'))" and ret is None
    assert relative_signature(App(), "function", "f", None, {}, "(x, y=2)", None) is None


def test_documented_constants_lose_the_checkout_path():
    from docutils import nodes
    from docutils.utils import new_document
    from sphinx import addnodes

    class App:
        srcdir = str(ROOT)

    doctree = new_document("api")
    sig = addnodes.desc_signature()
    sig += addnodes.desc_name(text="PAPER_TABLES")
    sig += addnodes.desc_annotation(text=f" = PosixPath('{ROOT}/fusionlib/compendium/x')")
    doctree += sig
    relative_signature_text(App(), doctree)
    assert sig.astext() == "PAPER_TABLES = Path('fusionlib/compendium/x')"
    assert isinstance(sig[1][0], nodes.Text)


@pytest.mark.parametrize("url", ["", "   ", None])
def test_unset_repository_url_leaves_the_repository_and_launch_buttons_out(url):
    options = {"repository_url": url, "use_repository_button": True,
               "launch_buttons": {"binderhub_url": "https://mybinder.org"}}
    opts, is_set = header_options(options)
    assert not is_set and opts["launch_buttons"] == {} and opts["repository_url"] == ""
    assert not any(opts[k] for k in ("use_repository_button", "use_issues_button",
                                     "use_edit_page_button", "use_source_button"))
    assert opts["use_download_button"] is True
    assert "repository URL unset" in UNSET and "repository.url in _config.yml" in UNSET


def test_a_set_repository_url_turns_the_buttons_on():
    launch = {"binderhub_url": "https://mybinder.org"}
    opts, is_set = header_options({"repository_url": "https://example.org/team/compendium",
                                   "launch_buttons": launch})
    assert is_set and opts["use_repository_button"] and opts["use_issues_button"]
    assert opts["launch_buttons"] == launch and opts["use_download_button"] is True


def test_launch_buttons_open_the_chapter_source_not_the_executed_copy():
    url = "https://mybinder.org/v2/gh/team/repo/main?urlpath=tree/book/executed/ptgan_toys.ipynb"
    assert source_launch_url(url) == \
        "https://mybinder.org/v2/gh/team/repo/main?urlpath=tree/notebooks/ptgan_toys.md"
    assert source_launch_url("https://x/tree/book/intro.md") == "https://x/tree/book/intro.md"


def test_the_config_states_the_repository_url_explicitly():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    # left out, Jupyter Book's default would link its own repository: the key must be there,
    # empty until the team sets the public URL
    url = config["repository"]["url"]
    assert url in ("", None) or (url.startswith("https://") and "executablebooks" not in url)
    assert "repository" in config["sphinx"]["local_extensions"]
    assert config["html"]["use_repository_button"] is False  # the extension turns it on


#: a role, an optional ``~`` or ``!``, then a target (dotted name, a ``(`` or ``()`` after a
#: function) that a line break interrupts before its closing backquote
_SPLIT_ROLE = re.compile(
    r":(?:py:)?(?:func|mod|class|data|meth|attr|exc|obj|const):`[~!]?[\w.]*(?:\(\)?)?\n")


def _split_roles(text: str) -> list[str]:
    """Cross-reference roles whose target runs past the end of a line: Sphinx reads the target
    with the line break in it, cannot resolve it, and the strict (nitpicky) build fails."""
    return [m.group(0).strip() for m in _SPLIT_ROLE.finditer(text)]


def test_a_role_target_split_across_lines_is_found():
    planted = "reads (:data:`~fusionlib.fairtest.protocol.cells.\nPROTOCOL_CONFIG`) here"
    assert _split_roles(planted) == [":data:`~fusionlib.fairtest.protocol.cells."]
    assert _split_roles("reads\n(:data:`~fusionlib.fairtest.protocol.cells.PROTOCOL_CONFIG`)") == []
    # a method split after its parenthesis, and a target whose link is suppressed with ``!``
    assert _split_roles("see :meth:`Trainer.fit(\n)` here") == [":meth:`Trainer.fit("]
    assert _split_roles("see :py:func:`!fusionlib.io.\natomic_write_text`") == [
        ":py:func:`!fusionlib.io."]
    assert _split_roles("see :meth:`Trainer.fit()` and :func:`!f`\n") == []


def test_no_cross_reference_target_is_split_across_lines():
    found = {str(p.relative_to(ROOT)): _split_roles(p.read_text(encoding="utf-8"))
             for p in sorted((ROOT / "fusionlib").rglob("*.py"))}
    assert {path: roles for path, roles in found.items() if roles} == {}
