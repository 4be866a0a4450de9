"""The case viewer in a real browser: Playwright drives the system Chromium over the pages a
small real run writes (TPBench: built-in corpus, three methods, the deletion experiment;
KEEP-Bench: one case per subset, two compressors), uses each filter and checks what the page
shows against the page's own data. Slow: it starts a browser."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compressbench.keepbench.viewer.page import FILENAME as KEEP_FILE
from compressbench.tpbench.viewer.page import VIEWER_DIR
from support.viewer_run import inside, page_data, run_keepbench, run_tpbench

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer-browser")
    with inside(folder):
        run_tpbench(folder)
        run_keepbench(folder)
    return folder / VIEWER_DIR


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if chromium is None:
        pytest.skip("no Chromium (apt-get install -y chromium)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    p = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    p.close()
    assert not errors, errors


def _open(page: Any, file: Path, hash_: str = "") -> None:
    page.goto(file.as_uri() + (f"#{hash_}" if hash_ else ""))
    page.wait_for_selector("#cases article")


def _keys(page: Any) -> list[str]:
    return [
        str(k)
        for k in page.eval_on_selector_all("#cases article", "els => els.map(e => e.dataset.key)")
    ]


def _all_keys(page: Any) -> list[str]:
    """Every case the filters let through (pressing "show more" until the list is complete)."""
    while page.is_visible("#more"):
        page.click("#more")
    return _keys(page)


def _count(page: Any) -> str:
    return str(page.text_content("#count"))


def test_tpbench_filters_show_what_they_say(pages: Path, page: Any) -> None:
    index = pages / "index.html"
    data = page_data(index)
    cases = {c["key"]: c for c in data["cases"]}
    _open(page, index)
    assert _count(page) == f"{len(cases)} of {len(cases)} probes shown"
    assert len(_all_keys(page)) == len(cases)

    page.select_option("#f-probe", "P2")
    p2 = [k for k, c in cases.items() if c["probe_type"] == "P2"]
    assert _all_keys(page) == p2 and "probe=P2" in page.url
    assert _count(page) == f"{len(p2)} of {len(cases)} probes shown"

    page.select_option("#f-method", "first_n")  # its column and full context's, no other
    headers = page.eval_on_selector_all(
        "#cases article:first-child table.turns th.k", "e => e.map(x => x.textContent)"
    )
    assert headers == ["full_context", "first_n"]
    page.select_option("#f-outcome", "full_right_method_wrong")
    lost = [
        k
        for k in p2
        if cases[k]["answers"]["full_context"]["strict"] == 1
        and cases[k]["answers"]["first_n"]["strict"] != 1
    ]
    assert lost and _all_keys(page) == lost
    for key in lost:  # what the card says is the data's answer
        card = page.locator(f'article[data-key="{key}"]')
        shown = card.locator('tr[data-method="first_n"] td[data-field="prediction"]').text_content()
        assert str(cases[key]["answers"]["first_n"]["prediction"]) in str(shown)

    page.select_option("#f-dataset", "builtin")
    assert _all_keys(page) == lost
    page.click("#reset")
    assert len(_all_keys(page)) == len(cases) and page.input_value("#f-probe") == ""

    dialogue = next(iter(cases.values()))["dialogue_id"]
    page.fill("#f-q", dialogue)
    same = [k for k, c in cases.items() if dialogue in c["dialogue_id"]]
    assert _all_keys(page) == same


def test_summary_links_open_their_cases(pages: Path, page: Any) -> None:
    index = pages / "index.html"
    data = page_data(index)
    _open(page, index)
    page.click('.summary-table a[href*="method=recency"][href*="probe=P3"][href*="outcome=wrong"]')
    wrong = [
        c["key"]
        for c in data["cases"]
        if c["probe_type"] == "P3" and c["answers"]["recency"]["strict"] != 1
    ]
    page.wait_for_function(
        "n => document.querySelectorAll('#cases article').length === n", arg=len(wrong)
    )
    assert _keys(page) == wrong
    assert page.input_value("#f-method") == "recency" and page.input_value("#f-outcome") == "wrong"
    # a report cell's link opens the same view directly
    _open(page, index, "dataset=builtin&method=recency&probe=P3&ratio=0.3&outcome=wrong")
    assert _keys(page) == wrong


def test_marks_kept_turns_and_deletions_are_drawn(pages: Path, page: Any) -> None:
    index = pages / "index.html"
    data = page_data(index)
    case = next(c for c in data["cases"] if c["probe_type"] == "P2")
    _open(page, index, "case=" + case["key"].replace("|", "%7C"))
    assert _keys(page) == [case["key"]]
    card = page.locator("#cases article")
    update = case["marks"]["update"][0]
    row = card.locator("table.turns tbody tr").nth(update)
    assert "update" in str(row.get_attribute("class")) and row.locator(".tag.update").count() == 1
    kept = card.locator("table.turns tbody td.kept").count()
    assert kept == sum(len(a["kept"]) for a in case["answers"].values())
    deletions = page.locator("#deletion-list article")
    assert deletions.count() == len(data["deletions"]) > 0
    first = data["deletions"][0]
    conditions = deletions.first.locator("[data-condition]")
    assert conditions.count() == len(first["conditions"])
    assert "removed turn" in str(deletions.first.text_content())


def test_keyboard_reaches_the_filters_and_print_hides_them(pages: Path, page: Any) -> None:
    _open(page, pages / "index.html")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "cases"
    page.focus("#f-probe")
    page.keyboard.press("ArrowDown")  # a select changes by keyboard alone
    assert page.input_value("#f-probe") != ""
    page.emulate_media(media="print")
    assert not page.is_visible("#filters")
    assert page.is_visible("#cases article")


def test_keepbench_filters_show_what_they_say(pages: Path, page: Any) -> None:
    keep = pages / KEEP_FILE
    data = page_data(keep)
    _open(page, keep)

    def ids() -> list[str]:
        return [
            str(x)
            for x in page.eval_on_selector_all("#cases article", "e => e.map(x => x.dataset.case)")
        ]

    assert ids() == [c["case_id"] for c in data["cases"]]
    subset = data["cases"][0]["subset"]
    page.select_option("#f-subset", subset)
    assert ids() == [c["case_id"] for c in data["cases"] if c["subset"] == subset]
    page.click("#reset")
    page.select_option("#f-compressor", "recency")
    outputs = page.eval_on_selector_all(
        "#cases article:first-child [data-label]", "e => e.map(x => x.dataset.label)"
    )
    assert outputs == ["recency x1.0"]
    page.select_option("#f-outcome", "lost")
    lost = [
        c["case_id"]
        for c in data["cases"]
        if any(
            v["preserved"] is not True for v in c["outputs"]["recency x1.0"]["verdicts"].values()
        )
    ]
    assert ids() == lost
    first = next(c for c in data["cases"] if c["case_id"] == lost[0])
    verdicts = page.eval_on_selector_all(
        "#cases article:first-child li.prop", "e => e.map(x => [x.dataset.prop, x.dataset.verdict])"
    )
    expected = [
        [
            p["id"],
            "kept"
            if first["outputs"]["recency x1.0"]["verdicts"][p["id"]]["preserved"]
            else "lost",
        ]
        for p in first["propositions"]
    ]
    assert [[p, v.split(" ")[0]] for p, v in verdicts] == [[p, v] for p, v in expected]
    page.fill("#f-q", first["case_id"])
    assert ids() == [first["case_id"]]
