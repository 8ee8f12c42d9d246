"""Sphinx directive ``api-modules``: autodoc every public module of the named packages.

``.. api-modules:: fusionlib.gan fusionlib.rng`` expands to one ``automodule`` (members
documented) per public module found by walking each package, so the API pages never miss a
module that is added later.

Default values that are paths inside the checkout (``root=PosixPath('/home/.../fusionlib/
compendium/paper_tables')``) are shown relative to the repository
(``root=Path('fusionlib/compendium/paper_tables')``), in signatures and in the values of
documented constants: the build machine's absolute path tells a reader nothing.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles


def public_modules(name: str) -> list[str]:
    """``name`` if it is a module, else every public module and subpackage below the package
    ``name`` (a subpackage is documented by its ``__init__``: an experiment's rooms, or the
    face of the cell machinery, :mod:`fusionlib.compendium.cells`)."""
    mod = importlib.import_module(name)
    if not hasattr(mod, "__path__"):
        return [name]
    found = []
    for info in pkgutil.walk_packages(mod.__path__, prefix=f"{name}."):
        leaf = info.name.rsplit(".", 1)[-1]
        if leaf.startswith("_") or any(p.startswith("_") for p in info.name.split(".")[1:]):
            continue
        found.append(info.name)
    return sorted(found)


#: members every scikit-learn estimator inherits; documented by scikit-learn, not here
_SKLEARN = ("get_params, set_params, get_metadata_routing, set_fit_request, "
            "set_score_request, set_transform_request, set_inverse_transform_request, "
            "set_predict_request, set_partial_fit_request, set_output")


class ApiModules(Directive):
    has_content = False
    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        lines = []
        for package in self.arguments[0].split():
            for module in public_modules(package):
                lines += [f".. rubric:: ``{module}``", "", f".. automodule:: {module}",
                          "   :members:", f"   :exclude-members: {_SKLEARN}", ""]
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source="api-modules"), container)
        return container.children


def setup(app):
    app.add_directive("api-modules", ApiModules)
    app.connect("autodoc-process-docstring", escape_docstring)
    app.connect("autodoc-process-signature", relative_signature)
    app.connect("doctree-read", relative_signature_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def repository_roots(*extra: str | Path) -> tuple[str, ...]:
    """The checkout's root as fusionlib is imported from it (and ``extra`` folders), as written
    and resolved, longest first."""
    package = Path(importlib.import_module("fusionlib").__file__).parent
    roots = {str(package.parent), str(package.resolve().parent)}
    roots |= {str(Path(p)) for p in extra} | {str(Path(p).resolve()) for p in extra}
    return tuple(sorted((r for r in roots if r not in ("", "/")), key=len, reverse=True))


def relative_paths(text: str, roots: tuple[str, ...]) -> str:
    """``text`` with every path under one of ``roots`` made relative to it:
    ``PosixPath('<root>/a/b')`` becomes ``Path('a/b')``, ``'<root>/a'`` becomes ``'a'``."""
    for root in roots:
        if root not in text:
            continue
        quoted = re.escape(root)
        text = re.sub(rf"\b(?:Posix|Windows)?Path\((['\"]){quoted}/([^'\"]*)\1\)",
                      r"Path(\1\2\1)", text)
        text = re.sub(rf"\b(?:Posix|Windows)?Path\((['\"]){quoted}\1\)", r"Path(\1.\1)", text)
        text = text.replace(f"{root}/", "")
    return text


def relative_signature(app, what, name, obj, options, signature, return_annotation):
    """``autodoc-process-signature``: default values under the checkout, made relative."""
    roots = repository_roots(app.srcdir)
    new = relative_paths(signature, roots) if signature else signature
    ret = relative_paths(return_annotation, roots) if return_annotation else return_annotation
    if (new, ret) == (signature, return_annotation):
        return None
    return new, ret


def relative_signature_text(app, doctree) -> None:
    """``doctree-read``: the same for the rest of an object's header (a constant's value)."""
    from sphinx import addnodes

    roots = repository_roots(app.srcdir)
    for sig in doctree.findall(addnodes.desc_signature):
        for text in list(sig.findall(nodes.Text)):
            new = relative_paths(str(text), roots)
            if new != str(text):
                text.parent.replace(text, nodes.Text(new))


_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(\w)_(?=[\s,.;:)\]]|$)")


def _escape(text: str) -> str:
    """Escape what plain-text docstrings mean literally but RST reads as markup: ``|x|``
    (substitutions) and ``name_`` (references), outside literal spans."""
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def escape_docstring(app, what, name, obj, options, lines):
    in_literal_block = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if in_literal_block and stripped and not line.startswith((" ", "\t")):
            in_literal_block = False
        if not in_literal_block:
            lines[i] = _escape(line)
        if stripped.endswith("::"):
            in_literal_block = True
