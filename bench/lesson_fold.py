"""Every step of every shipped lesson in projector mode at 1500x900, both languages: a screenshot of what the
projector shows first, and where each step's main picture lies (top y, bottom y in CSS pixels; the fold is 900).

    python bench/lesson_fold.py [--url http://127.0.0.1:8606] [--lessons first-lesson] [--langs zh,en]
                                [--shots /tmp/shots-lessons]

Without --url it starts `streamlit run app.py` on a free port and stops it at the end. A lesson is started the way a
teacher starts it: the Tour page (?projector=1), its 📚 popover, the lesson picked, "Start this lesson", then ▶ on
the lesson bar for each next step. The main picture of a step is its page's first chart (a Plotly figure, the SVG
the Two models / Scale pages draw, or the Tokenize page's token chips), found by PICTURE below; "whole" means its
bottom is at or above 900 and nothing of it is scrolled away. Chart labels that overprint are found by comparing
the bounding boxes of each figure's text elements (annotations and tick labels) after Plotly drew them.
Prints one table row per step and language (markdown, for bench/RESULTS.md).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from load_test import free_port, start_server, stop_server  # noqa: E402

from classroom import lessons  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1500, "height": 900}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# the main picture of a page: the first element matching, in page order
PICTURE = {"tokenize": "span.tok"}          # the token chips
DEFAULT = "[data-testid='stPlotlyChart'], .ol-picture svg"

MEASURE = r"""(sel) => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const els = [...main.querySelectorAll(sel)].filter(e => e.getBoundingClientRect().height > 4);
  if (!els.length) return null;
  const first = els[0], r = first.getBoundingClientRect();
  // the first picture's row: every picture whose top is within 40 px of the first's (side-by-side charts)
  const row = els.filter(e => Math.abs(e.getBoundingClientRect().top - r.top) < 40);
  const bottom = Math.max(...row.map(e => e.getBoundingClientRect().bottom));
  // overprinted labels: text boxes of one figure that intersect (by more than 2 px each way)
  // every text of every figure on screen; rotated tick labels (their boxes are not their glyphs) left out
  let clashes = [];
  const shown = [...main.querySelectorAll("[data-testid='stPlotlyChart']")].filter(e => {
    const b = e.getBoundingClientRect(); return b.bottom > 0 && b.top < window.innerHeight; });
  for (const fig of shown) {
    const texts = [...fig.querySelectorAll('text')].filter(t => t.textContent.trim()
                     && !/rotate\((?!0)/.test((t.getAttribute('transform') || '') +
                                            (t.parentNode.getAttribute('transform') || '')))
                   .map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i][1], b = texts[j][1];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      const small = Math.min(a.width * a.height, b.width * b.height);
      if (w > 0 && h > 0 && w * h > 0.2 * small) clashes.push(texts[i][0] + ' / ' + texts[j][0]);
    }
  }
  const svgs = row.map(e => e.querySelector('svg.main-svg') || e.querySelector('svg') || e);
  const cut = row.some(e => { const b = e.getBoundingClientRect();
                              return b.right > window.innerWidth + 1 || b.left < -1; });
  return {top: Math.round(r.top), bottom: Math.round(bottom), n: row.length, clashes: clashes.slice(0, 4),
          cut_x: cut, svg: svgs.length};
}"""


def wait_idle(page, timeout=180_000):
    page.wait_for_timeout(400)
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_timeout(700)            # Plotly draws after the script ends


def run(base: str, names: list[str], langs: list[str], shots: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    shipped = lessons.shipped()
    rows = []
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for lang in langs:
            for name in names:
                lesson = lessons.load(shipped[name])
                ctx = browser.new_context(viewport=VIEWPORT)
                page = ctx.new_page()
                page.goto(f"{base}/tour?projector=1&lang={lang}")
                wait_idle(page)
                page.get_by_role("button", name="📚").first.click()
                page.wait_for_timeout(500)
                page.locator(".st-key-lesson_choice").click()
                page.get_by_role("option", name=lesson.title[lang]).click()
                wait_idle(page)
                page.locator(".st-key-lesson_start button").click()
                for k, step in enumerate(lesson.steps):
                    wait_idle(page)
                    page.mouse.move(5, 895)                 # no hover label over a chart
                    page.wait_for_timeout(300)
                    shot = shots / f"{name}.{k + 1:02d}.{step.page}.{lang}.png"
                    page.screenshot(path=str(shot), full_page=False)
                    m = page.evaluate(MEASURE, PICTURE.get(step.page, DEFAULT))
                    bar = page.evaluate("""() => { const b = document.querySelector('.st-key-lesson-bar');
                                           return b ? Math.round(b.getBoundingClientRect().bottom) : null; }""")
                    rows.append(dict(lang=lang, lesson=name, step=k + 1, page=step.page, bar=bar, shot=shot.name,
                                     **(m or {"top": None, "bottom": None, "n": 0, "clashes": [], "cut_x": False})))
                    print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
                    if k + 1 < len(lesson.steps):
                        page.locator(".st-key-lesson_next button").first.click()
                ctx.close()
        browser.close()
    return rows


def table(rows: list[dict]) -> str:
    out = ["| lesson | step | page | lang | bar bottom | picture top | picture bottom | whole | overprinted |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        whole = "yes" if r["bottom"] is not None and r["bottom"] <= 900 and not r["cut_x"] else "NO"
        out.append(f"| {r['lesson']} | {r['step']} | {r['page']} | {r['lang']} | {r['bar']} | {r['top']} | "
                   f"{r['bottom']} | {whole} | {'; '.join(r['clashes']) or '-'} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="")
    ap.add_argument("--lessons", default=",".join(lessons.shipped()))
    ap.add_argument("--langs", default="zh,en")
    ap.add_argument("--shots", default="/tmp/shots-lessons")
    a = ap.parse_args()
    proc = None
    base = a.url.rstrip("/")
    if not base:
        port = free_port()
        proc = start_server(port, {})
        base = f"http://127.0.0.1:{port}"
    try:
        rows = run(base, a.lessons.split(","), a.langs.split(","), Path(a.shots))
    finally:
        if proc:
            stop_server(proc)
    print(table(rows))


if __name__ == "__main__":
    main()
