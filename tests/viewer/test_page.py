"""The generic viewer page: data embedded so no text can close its element, stable bytes,
templates found beside the base, a script that could end its element refused, and a set of
pages written whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compressbench.viewer import PageSpec, embed_json, render_page, write_pages
from support.viewer_run import page_data

TEMPLATE = '{% extends "base.html.j2" %}{% block intro %}<p id="who">{{ who }}</p>{% endblock %}'


def _spec(tmp_path: Path, data: object, **kw: object) -> PageSpec:
    (tmp_path / "t.html.j2").write_text(TEMPLATE, encoding="utf-8")
    script = tmp_path / "s.js"
    if not script.exists():
        script.write_text("console.log(CB.data);\n", encoding="utf-8")
    base = {"who": "<b>me</b>"}
    return PageSpec(
        filename="p.html",
        title="T & t",
        template="t.html.j2",
        template_dir=tmp_path,
        data=data,  # type: ignore[arg-type]
        scripts=(script,),
        context={**base, **kw},
        nav=(("one", "p.html"), ("two", "q.html")),
    )


def test_data_that_looks_like_markup_stays_data(tmp_path: Path) -> None:
    data = {"text": "</script><script>alert(1)</script> & <!-- \u2028"}
    html = render_page(_spec(tmp_path, data))
    assert "</script><script>alert" not in html
    assert html.count("</script>") == 3  # data, shared script, page script
    (tmp_path / "p.html").write_text(html, encoding="utf-8")
    assert page_data(tmp_path / "p.html") == data
    assert json.loads(embed_json(data)) == data
    assert "&lt;b&gt;me&lt;/b&gt;" in html and "<title>T &amp; t</title>" in html  # autoescaped
    assert '<a href="p.html" aria-current="page">one</a>' in html


def test_the_same_data_give_the_same_bytes(tmp_path: Path) -> None:
    assert render_page(_spec(tmp_path, {"b": 1, "a": [1.5, None]})) == render_page(
        _spec(tmp_path, {"a": [1.5, None], "b": 1})
    )


def test_a_non_finite_number_is_refused_with_its_place(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"data\.cases\[1\]\.strict"):
        embed_json({"cases": [{"strict": 1.0}, {"strict": float("nan")}]})


def test_a_script_that_would_close_its_element_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.js").write_text('const s = "</SCRIPT>";\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"s\.js"):
        render_page(_spec(tmp_path, {}))


def test_a_failing_page_leaves_no_page_of_the_set_written(tmp_path: Path) -> None:
    good = _spec(tmp_path, {"a": 1})
    bad = PageSpec("q.html", "Q", "missing.html.j2", tmp_path, {})
    out = tmp_path / "out"
    with pytest.raises(Exception, match=r"missing\.html\.j2"):
        write_pages([good, bad], out)
    assert not out.exists() or not any(out.iterdir())
    assert [p.name for p in write_pages([good], out)] == ["p.html"]
