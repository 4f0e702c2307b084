"""Regenerate the README's picture of an HTML report: the founding example's report, from its
top through the timeline, as Debian's headless Chromium (driven by Playwright) draws it.

    python scripts/screenshot_report.py                      # docs/report-founding-incident.png
    python scripts/screenshot_report.py --log other.log --out /tmp/report.png
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import ARGS, CHROMIUM  # noqa: E402  (the test suite's launcher settings)

WIDTH = 1000  # CSS px; the page's column is 62rem wide
BELOW = 24  # px kept under the timeline picture


def html_of(log: Path) -> str:
    from analyzer.html_report import to_html
    from analyzer.triage import analyze

    return to_html(analyze([str(log.relative_to(ROOT) if log.is_relative_to(ROOT) else log)], knowledge=False))


def shoot(html: str, out: Path) -> int:
    """Write the top of the page (header, findings list, timeline) as a PNG; its size in bytes."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "report.html"
        page_file.write_text(html, encoding="utf-8")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": 800}, device_scale_factor=1)
            page.goto(page_file.as_uri())
            bottom = page.evaluate("document.querySelector('#timeline figure').getBoundingClientRect().bottom")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True,
                            clip={"x": 0, "y": 0, "width": WIDTH, "height": round(bottom) + BELOW})
            browser.close()
    return out.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, default=ROOT / "examples" / "founding-incident.log")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report-founding-incident.png")
    args = parser.parse_args()
    size = shoot(html_of(args.log.resolve()), args.out)
    print(f"{args.out}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
