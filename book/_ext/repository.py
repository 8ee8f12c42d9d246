"""Sphinx extension: the page header's repository, issue and launch buttons from one setting.

The repository's public URL is ``repository.url`` in ``_config.yml`` (Jupyter Book passes it to
the theme as ``html_theme_options["repository_url"]``). Empty, the repository, issue, edit and
launch buttons are left out and the build says so (at info level: the build is strict); set,
the repository and issue buttons are turned on and the launch buttons of ``launch_buttons`` in
``_config.yml`` (Binder) are kept. The download button (the page as .ipynb or .md, or printed
to PDF) is on either way.

A chapter's page is rendered from the executed copy ``book/executed/<name>.ipynb``, which is
not in the repository (``make notebooks`` writes it); a launch button therefore opens the
chapter's MyST source ``notebooks/<name>.md`` (jupytext, in the pinned environment, opens it as
a notebook) instead of a file that a fresh clone does not have.
"""

from __future__ import annotations

import re

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
UNSET = ("repository URL unset: repository and launch buttons left out "
         "(set repository.url in _config.yml)")
#: the header buttons that need a repository URL
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button",
                      "use_source_button")
#: an executed chapter, as a launch URL names it
_EXECUTED = re.compile(r"book/executed/([\w-]+)\.ipynb")


def header_options(options: dict) -> tuple[dict, bool]:
    """The theme options with the header buttons that the repository URL allows; and whether
    the URL is set."""
    opts = dict(options or {})
    url = str(opts.get("repository_url") or "").strip()
    opts["use_download_button"] = True
    if not url:
        opts.update({button: False for button in REPOSITORY_BUTTONS})
        opts["repository_url"] = ""
        opts["launch_buttons"] = {}
        return opts, False
    opts["repository_url"] = url
    opts["use_repository_button"] = True
    opts["use_issues_button"] = True
    return opts, True


def configure(app, config) -> None:
    opts, is_set = header_options(config.html_theme_options)
    config.html_theme_options = opts
    if not is_set:
        LOGGER.info(UNSET)
    else:
        LOGGER.info(f"repository URL {opts['repository_url']}: repository, issue and launch "
                    "buttons on")


def source_launch_url(url: str) -> str:
    """A launch URL for an executed chapter, pointed at the chapter's MyST source instead."""
    return _EXECUTED.sub(r"notebooks/\1.md", url)


def launch_sources(app, pagename, templatename, context, doctree) -> None:
    """After the theme added its launch buttons: open the chapters' sources."""
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("url"):
                button["url"] = source_launch_url(button["url"])


def setup(app):
    app.connect("config-inited", configure)
    app.connect("html-page-context", launch_sources, priority=600)  # the theme's run at 501
    return {"parallel_read_safe": True, "parallel_write_safe": True}
