"""Self-contained static viewer pages shared by the benchmarks (no server, no network).

A benchmark gives a :class:`~compressbench.viewer.page.PageSpec`: its data (embedded in the
page as JSON), its Jinja2 template (extending this package's ``base.html.j2``) and its script;
:func:`~compressbench.viewer.page.write_pages` renders and writes the pages atomically. The
layout, stylesheet (screen and print) and the small script every page shares (URL-hash
filters, DOM building without ``innerHTML``, paging) live here, below both benchmarks.
"""

from __future__ import annotations

from compressbench.viewer.page import PageSpec, embed_json, render_page, write_pages

__all__ = ["PageSpec", "embed_json", "render_page", "write_pages"]
