"""The browser half of scripts/plain_install.sh: every page in zh and en, every fold and tab opened one at a time.

Runs from the developer's Python (it has Playwright); the app it visits runs from the plain venv the shell script
built, so nothing here is importable by the app. Usage (the shell script passes these):

    python scripts/plain_install_walk.py --url http://127.0.0.1:8612 --server-log /tmp/x/server.log \
        --deadline <unix time> [--pages scale,overview] [--langs zh,en] [--shots DIR] [--report FILE]

A page is a Stage with a `page` in content/stages.py, at URL /<page>?lang=<zh|en> (ui/state.py _from_url). For
each one it waits until the script has finished, then opens each fold (st.expander) and each tab (st.tabs) one at a
time: click, wait for the rerun the click starts (the app's views are lazy: a fold or tab is drawn when opened),
check, next; folds and tabs that only appear inside another are walked too. A check fails on an exception box, an
st.error box, "Traceback" anywhere in the page, "Page not found", no title, or a page that never finishes; and, once
the walk is over, on a traceback in the server's log that no page showed.

Every st.error fails, not only the ones that read like a crash (those are named so in the report): the app writes
st.error for a bad input (an empty prompt, two prompts of different lengths on Compare, a wrong quiz answer) or a
failed check (✗), and on the defaults with no input there is none of either; the walk types nothing.
An exception box says only "This app has encountered an error" (.streamlit/config.toml redacts details, as users
get it); the report gives the exception's own line from the server's log.
Exit status 0 when nothing failed, 1 otherwise; the summary goes to stdout.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1500, "height": 900}
FIRST_VISIT_S = 300       # a page's first run; the very first one may prepare the bundled model (15-60 s)
RERUN_S = 180             # a click's rerun: a fold may compute a whole analysis
RERUN_START_S = 2.0       # a click that starts no rerun within this (a fold that is not lazy) is checked as it is
QUIET_S = 0.6             # finished means finished for this long (elements and reruns arrive over a websocket)
MAX_STEPS = 300           # folds and tabs opened on one page view at most (Interview practice: ~100, a fold a question)

# Words that make an st.error box read like a crash rather than a message the page writes on purpose.
CRASH_WORDS = re.compile(r"Traceback|Error:|Exception|No module named|ModuleNotFoundError|ImportError|"
                         r"AttributeError|KeyError|TypeError|ValueError|RuntimeError")
# A Python exception's last line in the server's log: "ModuleNotFoundError: No module named 'accelerate'".
EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)[\w.]*)(: .*)?$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")      # Streamlit logs through rich, in colour, where rich is installed

# Counts the app root's script-state changes to "running", so a click's rerun is seen even when it is over
# before the next poll. Runs before each document's own scripts (page.add_init_script).
RUN_COUNTER = """
window.__laneRuns = 0;
new MutationObserver(ms => { for (const m of ms) {
  if (m.target.getAttribute('data-test-script-state') === 'running') window.__laneRuns += 1; } })
  .observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
"""

# Every fold and tab on the page as drawn: kind, label, where it sits (the labels of the folds and tabs around it),
# whether it is visible and open. Marks each with data-lane-id so the chosen one can be clicked.
CONTROLS = """
() => {
  const text = el => {     // the label as read: a Material icon's ligature name ("keyboard_arrow_right") left out
    if (!el) return '';
    const c = el.cloneNode(true);
    c.querySelectorAll('[data-testid="stIconMaterial"], [data-testid^="stExpanderIcon"]').forEach(x => x.remove());
    return c.textContent.replace(/\\s+/g, ' ').trim();
  };
  const where = el => {
    const path = [];
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (p.matches('[data-testid="stExpander"]')) path.unshift('fold ' + text(p.querySelector('summary')));
      if (p.getAttribute('role') === 'tabpanel') {
        const tab = document.getElementById(p.getAttribute('aria-labelledby') || '');
        path.unshift('tab ' + (tab ? text(tab) : '?'));
      }
    }
    if (el.closest('[data-testid="stSidebar"]')) path.unshift('sidebar');
    return path.join(' > ');
  };
  const depth = el => { let n = 0; for (let p = el.parentElement; p; p = p.parentElement)
                          if (p.matches('[data-testid="stTabs"], [data-testid="stExpander"]')) n += 1; return n; };
  const out = [];
  let i = 0;
  for (const d of document.querySelectorAll('[data-testid="stExpander"] details')) {
    const s = d.querySelector('summary');
    if (!s) continue;
    s.setAttribute('data-lane-id', String(i));
    const box = d.closest('[data-testid="stExpander"]');
    out.push({id: i++, kind: 'fold', label: text(s), where: where(box), depth: depth(box),
              visible: s.getClientRects().length > 0, open: d.open});
  }
  for (const b of document.querySelectorAll('[data-testid="stTabs"] [role="tab"]')) {
    b.setAttribute('data-lane-id', String(i));
    out.push({id: i++, kind: 'tab', label: text(b), where: where(b), depth: depth(b),
              visible: b.getClientRects().length > 0, open: b.getAttribute('aria-selected') === 'true'});
  }
  return out;
}
"""

# What is wrong on the page as drawn. Error alerts inside an exception box belong to the box.
PROBLEMS = """
() => {
  const text = el => el.innerText.replace(/\\s+/g, ' ').trim();
  const out = [];
  for (const b of document.querySelectorAll('[data-testid="stException"]')) out.push(['exception', text(b)]);
  for (const a of document.querySelectorAll('[data-testid="stAlertContentError"]'))
    if (!a.closest('[data-testid="stException"]')) out.push(['error', text(a)]);
  const body = document.body.innerText;
  if (body.includes('Page not found')) out.push(['page-not-found', 'Page not found']);
  const rest = document.body.cloneNode(true);       // a traceback outside the exception boxes, which are counted above
  rest.querySelectorAll('[data-testid="stException"]').forEach(x => x.remove());
  const others = rest.textContent;
  const tb = others.indexOf('Traceback');
  if (tb >= 0) out.push(['traceback', others.slice(tb, tb + 300).replace(/\\s+/g, ' ')]);
  return out;
}
"""


@dataclass
class Visit:
    page: str
    lang: str
    seconds: float = 0.0
    folds: int = 0
    tabs: int = 0
    shown: int = 0                               # folds and tabs open from the start (a tab group's first tab)
    opened: list = field(default_factory=list)
    unreached: list = field(default_factory=list)  # folds and tabs in the page that never became visible


class ServerLog:
    """The app server's stderr: Streamlit logs an uncaught exception's whole traceback there, while the browser shows
    only a redacted box (.streamlit/config.toml: client.showErrorDetails = "none", as users get it)."""

    def __init__(self, path: str | None):
        self.path = Path(path) if path else None
        self.mark()

    def mark(self):
        self.at = self.path.stat().st_size if self.path and self.path.exists() else 0

    def exception_since_mark(self, wait_s: float = 3.0) -> str:
        """The last exception line logged since mark(); the box can reach the browser before the log line."""
        deadline = time.time() + wait_s
        while self.path and self.path.exists():
            with open(self.path, "rb") as f:
                f.seek(self.at)
                new = ANSI.sub("", f.read().decode("utf-8", "replace")).splitlines()
            lines = [ln.strip() for ln in new if EXC_LINE.match(ln.strip())]
            if lines or time.time() > deadline:
                return lines[-1] if lines else ""
            time.sleep(0.2)
        return ""

    def tracebacks(self) -> list[tuple[int, str]]:
        """Every traceback in the whole log: (its line number, the exception's line)."""
        if not self.path or not self.path.exists():
            return []
        out, start = [], None
        for n, ln in enumerate(ANSI.sub("", self.path.read_text("utf-8", "replace")).splitlines(), 1):
            if "Traceback (most recent call last)" in ln:
                start = n
            elif start and EXC_LINE.match(ln):
                out.append((start, ln.strip()))
                start = None
        return out


def script_busy(page) -> bool:
    """The script runs (the app root's data-test-script-state), or a spinner or the running man is up."""
    return page.evaluate("""() => {
      const app = document.querySelector('[data-testid="stApp"]');
      const state = app ? app.getAttribute('data-test-script-state') : 'initial';
      return !['notRunning', 'compilationError'].includes(state)
          || !!document.querySelector('[data-testid="stSpinner"], [data-testid="stStatusWidgetRunningIcon"]');
    }""")


def wait_finished(page, timeout_s: float) -> None:
    deadline = time.time() + timeout_s
    quiet_since = None
    while time.time() < deadline:
        if script_busy(page):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= QUIET_S:
            return
        page.wait_for_timeout(150)
    raise TimeoutError(f"still running after {timeout_s:.0f} s")


def wait_rerun(page, runs_before: int) -> None:
    """After a click: wait for the rerun it starts (if one starts), then for it to finish."""
    start = time.time()
    while time.time() - start < RERUN_START_S:
        if page.evaluate("window.__laneRuns") > runs_before or script_busy(page):
            break
        page.wait_for_timeout(100)
    wait_finished(page, RERUN_S)


def title_ok(page, want: str) -> tuple[bool, list[str]]:
    titles = [" ".join(t.split()) for t in page.locator('[data-testid="stMain"] h1').all_inner_texts()]
    return any(" ".join(want.split()) in t for t in titles), titles


def describe(kind: str, text: str, log_line: str) -> str:
    if kind == "exception":
        return f"exception box: {log_line or text[:300]}" + ("" if log_line else " (no exception in the server log)")
    if kind == "error":
        sort = "st.error that reads like a crash" if CRASH_WORDS.search(text) else "st.error"
        return f"{sort}: {text[:300]}"
    return f"{kind}: {text[:300]}"


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def new_page(browser):
    page = browser.new_page(viewport=VIEWPORT)
    page.add_init_script(RUN_COUNTER)
    return page


def walk_page(page, base: str, name: str, heading: str, lang: str, log: ServerLog, deadline: float, failures: list,
              shots: Path | None = None) -> Visit:
    """Open /<name>?lang=<lang>, check it, then open its folds and tabs one at a time; failures are appended."""
    v = Visit(name, lang)
    t0 = time.time()
    where = f"{name} [{lang}]"
    log.mark()
    page.goto(f"{base}/{name}?lang={lang}")
    try:
        page.wait_for_selector('[data-testid="stMain"] h1, [data-testid="stException"]', timeout=FIRST_VISIT_S * 1000)
        wait_finished(page, FIRST_VISIT_S)
    except Exception as e:  # noqa: BLE001  a page that never finishes is a failure, whatever Playwright raised
        failures.append(f"{where}: the page never finished ({str(e).splitlines()[0]})")
        v.seconds = time.time() - t0
        return v
    ok, titles = title_ok(page, heading)
    if not ok:
        failures.append(f"{where}: no title {heading!r} (h1s: {titles})")
    seen = set()

    def check(step: str):
        found = [(k, x) for k, x in page.evaluate(PROBLEMS) if (k, x) not in seen]
        line = log.exception_since_mark() if any(k == "exception" for k, _ in found) else ""
        for k, x in found:
            seen.add((k, x))
            failures.append(f"{where} {step}: {describe(k, x, line)}")
        return bool(found)

    check("on opening")
    done = set()
    for _ in range(MAX_STEPS):
        if time.time() > deadline:
            failures.append(f"{where}: out of time with folds or tabs unopened")
            break
        controls = page.evaluate(CONTROLS)
        for c in controls:      # open without a click: a tab group's first tab, a fold drawn open
            if c["visible"] and c["open"] and (c["kind"], c["where"], c["label"]) not in done:
                done.add((c["kind"], c["where"], c["label"]))
                v.shown += 1
        todo = [c for c in controls
                if c["visible"] and not c["open"] and (c["kind"], c["where"], c["label"]) not in done]
        if not todo:
            break
        # Folds first (an open fold stays open, so what lies inside a tab is walked while that tab is shown), then
        # the innermost tab (a tab group inside a tab is walked before its outer group moves on).
        c = min(todo, key=lambda c: (c["kind"] != "fold", -c["depth"], c["id"]))
        key = (c["kind"], c["where"], c["label"])
        done.add(key)
        step = f"{c['kind']} {c['label']!r}" + (f" (in {c['where']})" if c["where"] else "")
        log.mark()
        runs = page.evaluate("window.__laneRuns")
        try:
            page.locator(f'[data-lane-id="{c["id"]}"]').click(timeout=15_000)
            wait_rerun(page, runs)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{where} {step}: never finished ({str(e).splitlines()[0]})")
            break
        v.opened.append(step)
        v.folds += c["kind"] == "fold"
        v.tabs += c["kind"] == "tab"
        crashed = check(step)
        if crashed and shots:
            page.screenshot(path=str(shots / f"{name}.{lang}.{len(v.opened)}.png"), full_page=False)
        if crashed and c["kind"] == "fold":
            # close the fold that broke, so the page below it draws again and the walk goes on
            again = [x for x in page.evaluate(CONTROLS) if (x["kind"], x["where"], x["label"]) == key and x["open"]]
            if again:
                runs = page.evaluate("window.__laneRuns")
                page.locator(f'[data-lane-id="{again[0]["id"]}"]').click(timeout=15_000)
                wait_rerun(page, runs)
    else:
        failures.append(f"{where}: more than {MAX_STEPS} folds and tabs; the walk stopped there")
    v.unreached = [f"{c['kind']} {c['label']!r} (in {c['where'] or 'the page'})" for c in page.evaluate(CONTROLS)
                   if (c["kind"], c["where"], c["label"]) not in done]
    v.seconds = time.time() - t0
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--server-log")
    ap.add_argument("--deadline", type=float, default=time.time() + 25 * 60, help="unix time to stop walking at")
    ap.add_argument("--pages", help="comma-separated page names (default: every page in content/stages.py)")
    ap.add_argument("--langs", default="zh,en")
    ap.add_argument("--shots", help="a folder for a screenshot of each failure")
    ap.add_argument("--report", help="a file for every fold and tab opened, page by page")
    a = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from content import stages

    pages = stages.pages()
    if a.pages:
        pages = [stages.get(p) for p in a.pages.split(",")]
    langs = a.langs.split(",")
    shots = Path(a.shots) if a.shots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    log = ServerLog(a.server_log)
    failures: list[str] = []
    visits: list[Visit] = []
    t0 = time.time()
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = new_page(browser)
            for lang in langs:
                for stage in pages:
                    if time.time() > a.deadline:
                        failures.append(f"{stage.page} [{lang}]: not visited, out of time")
                        continue
                    v = walk_page(page, a.url, stage.page, stage.heading(lang), lang, log, a.deadline, failures, shots)
                    visits.append(v)
                    print(f"  {v.page:12s} {v.lang}  {v.seconds:6.1f} s  opened {v.folds:2d} folds {v.tabs:2d} tabs  "
                          f"({v.shown} open from the start)", flush=True)
        finally:
            browser.close()
    total = time.time() - t0
    # A traceback in the server's log that no page showed: a background job or a callback that failed quietly.
    for n, exc in log.tracebacks():
        if not any(exc in f for f in failures):
            failures.append(f"server log line {n}: a traceback no page showed: {exc}")
    if a.report:
        Path(a.report).write_text("".join(
            f"{v.page} [{v.lang}] {v.seconds:.1f} s, {v.shown} open from the start\n"
            + "".join(f"  opened {s}\n" for s in v.opened) + "".join(f"  never visible: {s}\n" for s in v.unreached)
            for v in visits), encoding="utf-8")

    print("\nplain install: pages x languages visited: "
          f"{len(visits)} ({len({v.page for v in visits})} pages x {len({v.lang for v in visits})} languages)")
    print(f"folds opened: {sum(v.folds for v in visits)}, tabs opened: {sum(v.tabs for v in visits)}, "
          f"walk {total:.0f} s")
    unreached = sum(len(v.unreached) for v in visits)
    if unreached:
        print(f"{unreached} fold(s) or tab(s) in the pages never became visible, so were not opened (see the report)")
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s):")
        for f in failures:
            print(f"  - {f}")
        return 1
    print("no exception box, no st.error, no traceback, no 'Page not found'; every page finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
