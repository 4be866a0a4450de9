#!/usr/bin/env python3
"""Open a case viewer page in headless Chromium: time its load, check it drew its cases,
optionally save a screenshot.

    python scripts/check_viewer.py reports/viewer/index.html --screenshot docs/images/viewer.png
    python scripts/check_viewer.py reports/viewer/index.html --hash "method=recency&probe=P2"

Load time is from navigation start to the end of the page's ``load`` event plus the first
paint of the case list (the script runs before ``load``), read from the browser's own
Navigation Timing; the best and the median of ``--runs`` fresh loads are printed. Needs
Playwright (``pip install 'compressbench[ui]'``) and a Chromium (``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

SYSTEM_CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking")
TIMING_JS = """
() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  resolve({ load: nav.loadEventEnd, painted: performance.now(),
            cases: document.querySelectorAll("#cases article").length,
            count: document.getElementById("count").textContent });
})))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("--hash", default="", help="filters to open with, e.g. method=recency")
    parser.add_argument("--screenshot", help="PNG of the page here")
    parser.add_argument("--full-page", action="store_true", help="screenshot the whole page")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default=SYSTEM_CHROMIUM)
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1000)
    args = parser.parse_args(argv)
    if not args.page.is_file():
        print(f"check_viewer: no page at {args.page}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    url = args.page.resolve().as_uri() + (f"#{args.hash}" if args.hash else "")
    times, seen = [], {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=list(FLAGS))
        try:
            for _ in range(args.runs):
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                errors: list[str] = []
                page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                page.goto(url, wait_until="load")
                seen = page.evaluate(TIMING_JS)
                if errors:
                    print(f"check_viewer: script error: {errors[0]}", file=sys.stderr)
                    return 1
                times.append(seen["painted"])
                if args.screenshot and len(times) == args.runs:
                    Path(args.screenshot).parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=args.screenshot, full_page=args.full_page)
                page.close()
        finally:
            browser.close()
    size = args.page.stat().st_size / 1e6
    print(f"page {args.page} ({size:.2f} MB): {seen['count']}, {seen['cases']} cards drawn")
    print(
        f"load to first drawn cases over {len(times)} fresh loads: best {min(times):.0f} ms,"
        f" median {statistics.median(times):.0f} ms"
    )
    if args.screenshot:
        print(f"screenshot: {args.screenshot}")
    return 0 if seen["cases"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
