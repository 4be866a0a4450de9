"""Render a viewer page: Jinja2 markup, the data as embedded JSON, inline CSS and scripts.

The page needs nothing outside itself: it opens from the file system, as an MLflow artifact,
or printed. Data go into ``<script type="application/json" id="cb-data">`` with ``<``, ``>``
and ``&`` escaped as JSON ``\\u`` sequences, so no text in the data can close the element;
scripts read it with ``JSON.parse`` and build the DOM with ``textContent`` only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from compressbench.jsonl import atomic_writer

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
BASE_CSS = STATIC / "viewer.css"
BASE_JS = STATIC / "viewer.js"

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


@dataclass(frozen=True)
class PageSpec:
    """One page of a viewer set.

    ``template`` is looked up in ``template_dir`` first, then in this package's templates (so
    it can ``{% extends "base.html.j2" %}``); ``context`` holds the extra template variables
    (summary rows, filter options); ``data`` is embedded as JSON for ``scripts``; ``nav`` lists
    (label, file name) of the set's pages.
    """

    filename: str
    title: str
    template: str
    template_dir: Path
    data: Mapping[str, Any]
    scripts: tuple[Path, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    nav: tuple[tuple[str, str], ...] = ()


def _finite(value: Any, where: str) -> Any:
    """``value`` with every non-finite float refused (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"viewer data: non-finite number at {where}")
    if isinstance(value, Mapping):
        return {k: _finite(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def embed_json(data: Any) -> str:
    """``data`` as compact JSON safe inside a ``<script>`` element (stable bytes)."""
    text = json.dumps(
        _finite(data, "data"), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _inline(path: Path, closer: str) -> str:
    """A stylesheet's or script's text for inlining; refused if it could close its element."""
    text = path.read_text(encoding="utf-8")
    if closer in text.lower():
        raise ValueError(f"{path}: contains {closer!r}, which would end the inline element")
    return text


def _environment(template_dir: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader([str(template_dir), str(TEMPLATES)]),
        autoescape=select_autoescape(("html", "j2"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(spec: PageSpec) -> str:
    """The page's HTML."""
    template = _environment(spec.template_dir).get_template(spec.template)
    return template.render(
        title=spec.title,
        filename=spec.filename,
        nav=spec.nav,
        css=_inline(BASE_CSS, "</style"),
        base_js=_inline(BASE_JS, "</script"),
        scripts=[_inline(p, "</script") for p in spec.scripts],
        data_json=embed_json(spec.data),
        **spec.context,
    )


def write_pages(specs: Sequence[PageSpec], out_dir: Path) -> list[Path]:
    """Render every page first, then write each atomically into ``out_dir``: a rendering
    error leaves no page of the set written."""
    rendered = [(out_dir / spec.filename, render_page(spec)) for spec in specs]
    for path, html in rendered:
        with atomic_writer(path) as fh:
            fh.write(html)
    return [path for path, _ in rendered]
