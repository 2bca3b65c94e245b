"""Load test: N concurrent browser sessions (one headless chromium, N contexts) against a local server.

    python bench/load_test.py --sessions 30            # writes bench/RESULTS_load.md

Each session opens three pages with its own prompt (?prompt=student <i> likes pandas) and checks that
the page shows its own marker, no other student's marker, and no exception box. Loopback only.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["tokenize", "attention", "lm_head"]
ANIMALS = ["pandas", "tigers", "otters", "herons", "lemurs", "bisons", "ravens", "geckos", "walrus", "ibexes"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def marker(i: int) -> str:
    return f"student {i} likes {ANIMALS[i % len(ANIMALS)]}"


def tree_hwm_kb(pid: int) -> int:
    """VmHWM (peak resident set) of a process and its children, in kB."""
    total = 0
    pids = [pid]
    try:
        pids += [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def start_server(port: int, env_extra: dict, script: Path = ROOT / "app.py") -> subprocess.Popen:
    """`streamlit run script` on 127.0.0.1:port (the app by default), returned once it answers its health check."""
    env = {**os.environ, **env_extra}
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port), "--server.address",
           "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"operator_lab_load_{port}.log", "wb")
    proc = subprocess.Popen(cmd, cwd=Path(script).parent, env=env, stdout=log, stderr=subprocess.STDOUT)
    print(f"server log: {log.name}")
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("the server did not start in 90 s")


def stop_server(proc: subprocess.Popen):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


async def session(browser, base: str, i: int, n: int, results: list, timeout_s: float):
    from playwright.async_api import TimeoutError as PwTimeout

    ctx = await browser.new_context()
    page = await ctx.new_page()
    mine = marker(i)
    others = [marker(j) for j in range(n) if j != i]
    try:
        for name in PAGES:
            url = f"{base}/{name}?lang=en&prompt={urllib.parse.quote(mine)}"
            t0 = time.perf_counter()
            ok, why = True, ""
            try:
                await page.goto(url, wait_until="domcontentloaded", timeout=timeout_s * 1000)
                # done when the page's title is drawn and no script is running any more (not every page has a chart)
                await page.wait_for_selector("[data-testid='stMain'] h1, [data-testid='stException']",
                                             timeout=timeout_s * 1000)
                await page.wait_for_function(
                    "() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                    " return a && a.getAttribute('data-test-script-state') === 'notRunning'"
                    " && !document.querySelector('[data-testid=\"stStatusWidget\"]'); }", timeout=timeout_s * 1000)
                text = await page.inner_text("body")
                box_sel = "[data-testid='stSidebar'] textarea"
                try:        # the prompt box is redrawn after the run: give it a moment to show the prompt again
                    await page.wait_for_function(f"(m) => {{ const t = document.querySelector({box_sel!r});"
                                                 " return t && t.value.trim() === m; }", arg=mine, timeout=15_000)
                except PwTimeout:
                    pass
                typed = await page.input_value(box_sel)
                box = await page.query_selector("[data-testid='stException']")
                if box:
                    ok, why = False, "exception box: " + (await box.inner_text())[:300].replace("\n", " ")
                elif typed.strip() != mine:
                    ok, why = False, f"own prompt not shown (prompt box: {typed[:60]!r})"
                elif any(o in text for o in others):
                    ok, why = False, "ANOTHER STUDENT'S PROMPT SHOWN"
            except PwTimeout:
                ok, why = False, "timeout"
            except Exception as e:   # noqa: BLE001  (reported, not raised: one session must not stop the run)
                ok, why = False, f"{type(e).__name__}: {e}"[:120]
            results.append(dict(session=i, page=name, seconds=time.perf_counter() - t0, ok=ok, why=why))
    finally:
        await ctx.close()


async def drive(base: str, n: int, timeout_s: float) -> list:
    from playwright.async_api import async_playwright

    results: list = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            await asyncio.gather(*(session(browser, base, i, n, results, timeout_s) for i in range(n)))
        finally:
            await browser.close()
    return results


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def run(sessions: int = 30, timeout_s: float = 240, env_extra=None, write: bool = True) -> dict:
    port = free_port()
    proc = start_server(port, env_extra or {})
    try:
        # warm the model once (the first session would otherwise wait for the load alone)
        t0 = time.perf_counter()
        asyncio.run(drive(f"http://127.0.0.1:{port}", 1, timeout_s))
        warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = asyncio.run(drive(f"http://127.0.0.1:{port}", sessions, timeout_s))
        wall = time.perf_counter() - t0
        hwm = tree_hwm_kb(proc.pid)
    finally:
        stop_server(proc)
    times = [r["seconds"] for r in results]
    fails = [r for r in results if not r["ok"]]
    summary = dict(sessions=sessions, pages=len(results), failures=len(fails), p50=statistics.median(times),
                   p95=pct(times, 0.95), max=max(times), wall=wall, warmup=warm, peak_mb=hwm / 1024,
                   leaks=sum("ANOTHER" in r["why"] for r in results), fail_list=fails[:10])
    table = (f"| sessions | page loads | failures | cross-session leaks | p50 s | p95 s | max s | wall s | server peak RSS MB |\n"
             f"|---|---|---|---|---|---|---|---|---|\n"
             f"| {sessions} | {len(results)} | {len(fails)} | {summary['leaks']} | {summary['p50']:.1f} | "
             f"{summary['p95']:.1f} | {summary['max']:.1f} | {wall:.0f} | {summary['peak_mb']:.0f} |\n")
    print(table)
    for f in fails[:10]:
        print("FAIL", f)
    if write:
        (ROOT / "bench" / "RESULTS_load.md").write_text(
            "# Load test (bench/load_test.py)\n\n"
            f"{sessions} concurrent chromium contexts, one browser, each opening /{', /'.join(PAGES)} with its own "
            "prompt; loopback; the bundled model on the CPU (2 cores). Warm-up (model load, one session): "
            f"{warm:.0f} s.\n\n" + table + "\nPeak RSS is VmHWM of the streamlit process and its children.\n")
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--classroom", action="store_true", help="run the server with OPERATOR_LAB_CLASSROOM=1")
    a = ap.parse_args()
    s = run(a.sessions, a.timeout, {"OPERATOR_LAB_CLASSROOM": "1"} if a.classroom else {})
    sys.exit(1 if s["failures"] else 0)
