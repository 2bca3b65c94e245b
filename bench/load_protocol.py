"""Load test at the protocol: one Python process plays a class of students against `streamlit run app.py`.

    python bench/load_protocol.py --students 30,60,120          # a table; writes bench/RESULTS_load.md
    python bench/load_protocol.py --students 60 --replicas 2    # 2 processes behind HAProxy (scripts/serve_class.sh)
    python bench/load_protocol.py --students 3 --actions 2 --think 0 --no-write   # a quick check

A browser is not needed to load the server: what it sends is a few protobuf messages on one websocket
(read from streamlit/web/server/starlette/starlette_websocket.py and runtime/app_session.py):
  - it opens ws://host/_stcore/stream (subprotocol "streamlit") and sends a BackMsg `rerun_script` (a ClientState)
    with the URL's query string and the page's url path as `page_name`;
  - the server answers with ForwardMsgs: `new_session`, `navigation` (the pages and their script hashes),
    `delta`s (the page's elements, each widget with its id), `page_info_changed` (the URL's new query string)
    and, when the run ends, `script_finished` (its status says whether it finished or failed);
  - every rerun carries `widget_states`: the value of each widget the last run drew (the browser keeps them; a
    widget left out loses its keyed session value), with the moved one changed (a slider: double_array_value;
    a number input: double_value; a radio/selectbox: the option's label as string_value; a button: trigger_value);
  - switching pages sends `rerun_script` with the target page's `page_script_hash`.
Each student opens the app with their own prompt, visits pages, moves the layer slider, runs a generation on
the Generate page, and waits a jittered think time between actions. Per action we record the time from the
request sent to `script_finished`; errors (exception elements, page-not-found, a failed run, a timeout);
leaks (another student's prompt in this student's stream: every message's bytes are scanned). The server's
RSS and CPU seconds come from /proc. Loopback only.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_test import ROOT, free_port, marker, start_server, stop_server  # noqa: E402

MARKER_RE = re.compile(rb"student (\d+) likes [a-z]+")       # marker(i) as bytes, as it sits in any message
# One cycle of a student's actions: (kind, page). "open" loads the first page from its URL; "page" follows a link;
# "layer" moves the layer slider of the current page; "generate" runs a generation on the Generate page.
CYCLE = [("open", "tokenize"), ("page", "attention"), ("layer", None), ("page", "generate"), ("generate", None),
         ("page", "rmsnorm"), ("layer", None), ("page", "lm_head")]
FAILED = ForwardMsg.FINISHED_WITH_COMPILE_ERROR


@dataclass
class Action:
    student: int
    kind: str
    page: str
    seconds: float
    ok: bool
    why: str = ""


@dataclass
class Student:
    """One simulated browser tab: what it has learnt from the server's messages so far."""
    i: int
    query: str                                   # the URL's query string (the app rewrites it as pickers move)
    pages: dict = field(default_factory=dict)    # url path -> page_script_hash, from `navigation`
    widgets: dict = field(default_factory=dict)  # user key -> the widget's element (proto) of the last run
    states: dict = field(default_factory=dict)   # widget id -> WidgetState: what the browser sends back each rerun
    kept: dict = field(default_factory=dict)     # the states before this run: a redrawn widget keeps its value
    page: str = ""
    backend: str = ""                            # the balancer's stickiness cookie, when there is one
    own_seen: bool = False
    leaks: set = field(default_factory=set)      # other students whose marker reached this stream
    messages: int = 0
    fragments: dict = field(default_factory=dict)  # fragment id -> seconds: st.fragment(run_every=) the browser reruns


def user_key(element_id: str) -> str:
    """'$$ID-<hash>-layer' -> 'layer' (streamlit/elements/lib/utils.py builds widget ids this way)."""
    parts = element_id.split("-", 2)
    return parts[2] if len(parts) == 3 else ""


def shown_state(etype: str, proto):
    """The WidgetState a browser holds for a newly drawn widget (its set value, else its default); None: no state."""
    ws = WidgetState(id=proto.id)
    own = getattr(proto, "set_value", False)
    if etype in ("checkbox",):
        ws.bool_value = proto.value if own else proto.default
    elif etype == "number_input":
        ws.double_value = proto.value if own else proto.default
    elif etype in ("text_area", "text_input"):
        ws.string_value = proto.value if own else proto.default
    elif etype in ("radio", "selectbox"):
        if own:
            ws.string_value = proto.raw_value
        elif 0 <= proto.default < len(proto.options):
            ws.string_value = proto.options[proto.default]
        else:
            return None
    elif etype == "slider" and proto.options:          # st.select_slider: option labels
        picked = proto.raw_value if own and proto.raw_value else [proto.options[int(v)] for v in proto.default]
        ws.string_array_value.data.extend(picked)
    elif etype == "slider":
        ws.double_array_value.data.extend(proto.value if own else proto.default)
    else:
        return None                                    # buttons (triggers) and display-only elements
    return ws


def read(st: Student, data: bytes) -> tuple[str | None, int | None]:
    """Take one ForwardMsg in: (an error seen in it or None, the script_finished status or None)."""
    st.messages += 1
    for m in MARKER_RE.finditer(data):
        j = int(m.group(1))
        if m.group(0) == marker(j).encode():
            if j == st.i:
                st.own_seen = True
            else:
                st.leaks.add(j)
    msg = ForwardMsg()
    msg.ParseFromString(data)
    kind = msg.WhichOneof("type")
    if kind == "navigation":
        st.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages if p.url_pathname}
    elif kind == "page_info_changed":
        st.query = msg.page_info_changed.query_string
    elif kind == "auto_rerun":            # a browser now reruns this fragment every `interval` s (bench/poll.py does)
        st.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
    elif kind == "page_not_found":
        return f"page not found: {msg.page_not_found.page_name!r}", None
    elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
        return "script error: " + msg.session_event.script_compilation_exception.message[:200], None
    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        el = msg.delta.new_element
        etype = el.WhichOneof("type")
        if etype == "exception":
            return f"exception on the page: {el.exception.type}: {el.exception.message[:200]}", None
        proto = getattr(el, etype)
        element_id = getattr(proto, "id", "") if hasattr(proto, "id") else ""
        if element_id and user_key(element_id):
            st.widgets[user_key(element_id)] = proto
        # as the browser does: a value the server sets wins, else the widget keeps the value it had, else its default
        if element_id in st.kept and not getattr(proto, "set_value", False):
            st.states[element_id] = st.kept[element_id]
        elif element_id and (state := shown_state(etype, proto)) is not None:
            st.states[element_id] = state
    elif kind == "script_finished":
        return None, msg.script_finished
    return None, None


async def request(ws, st: Student, back: BackMsg, timeout_s: float) -> tuple[float, str]:
    """Send one rerun request; wait for the run to finish. (seconds, error or '')."""
    st.widgets, st.kept, st.states = {}, st.states, {}   # a run redraws every widget; keep only this run's
    t0 = time.perf_counter()
    await ws.send(back.SerializeToString())
    deadline, error = t0 + timeout_s, ""
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return time.perf_counter() - t0, f"timeout: no script_finished in {timeout_s:.0f} s"
        try:
            data = await asyncio.wait_for(ws.recv(), left)
        except asyncio.TimeoutError:
            continue
        if isinstance(data, str):
            return time.perf_counter() - t0, "a text frame (the protocol is binary protobuf)"
        why, status = read(st, data)
        error = error or why or ""
        if status is None or status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            continue                      # a rerun follows: wait for the run that finishes
        if status == FAILED:
            error = error or "script_finished: FINISHED_WITH_COMPILE_ERROR"
        return time.perf_counter() - t0, error


def rerun(st: Student, page: str | None = None, widgets: list | None = None) -> BackMsg:
    back = BackMsg()
    cs = back.rerun_script
    cs.query_string = st.query
    if page is not None:                  # a link to a page: its url path, and its hash once navigation told it
        cs.page_name = page
        cs.page_script_hash = st.pages.get(page, "")
    else:
        cs.page_script_hash = st.pages.get(st.page, "")
    changed = {w.id: w for w in widgets or []}
    for wid, state in {**st.states, **changed}.items():
        cs.widget_states.widgets.append(state)
    return back


def widget_state(proto, **value):
    ws = WidgetState(id=proto.id)
    for k, v in value.items():
        if k == "double_array_value":
            ws.double_array_value.data.extend(v)
        else:
            setattr(ws, k, v)
    return ws


def plan_action(st: Student, kind: str, page: str | None, rng: random.Random, gen_tokens: int):
    """(BackMsg, page label) for the next action, or (None, reason) when the page lacks the widget."""
    if kind in ("open", "page"):
        st.page = page
        return rerun(st, page), page
    if kind == "layer":
        slider = st.widgets.get("layer")
        if slider is None:
            return None, f"no layer slider on /{st.page}"
        now = int(slider.value[0]) if slider.value else int(slider.default[0])
        choices = [v for v in range(int(slider.min), int(slider.max) + 1) if v != now]
        return rerun(st, widgets=[widget_state(slider, double_array_value=[float(rng.choice(choices))])]), st.page
    if kind == "generate":
        run, limit = st.widgets.get("gen_run"), st.widgets.get("gen_max")
        if run is None or limit is None:
            return None, f"no generate button on /{st.page}"
        return rerun(st, widgets=[widget_state(limit, double_value=float(gen_tokens)),
                                  widget_state(run, trigger_value=True)]), st.page
    raise ValueError(kind)


def http_cookie(base: str, timeout_s: float) -> str:
    """GET / as a browser does first; a balancer's stickiness cookie comes back here."""
    with urllib.request.urlopen(base + "/", timeout=timeout_s) as r:
        cookies = r.headers.get_all("Set-Cookie") or []
    return "; ".join(c.split(";", 1)[0] for c in cookies)


async def student(i: int, base: str, n_actions: int, think_s: float, timeout_s: float, gen_tokens: int,
                  results: list, students: list, start_s: float, seed: int):
    rng = random.Random(seed * 1000 + i)
    prompt = marker(i)
    st = Student(i, urllib.parse.urlencode({"prompt": prompt, "lang": "en"}))
    students.append(st)
    await asyncio.sleep(start_s)
    try:
        cookie = st.backend = await asyncio.to_thread(http_cookie, base, timeout_s)
        ws_url = base.replace("http://", "ws://") + "/_stcore/stream"
        # no client pings: a browser sends none (the server pings, and this client answers those)
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout_s,
                                      ping_interval=None, additional_headers={"Cookie": cookie} if cookie else None) as ws:
            for a in range(n_actions):
                kind, page = CYCLE[a % len(CYCLE)]
                back, label = plan_action(st, kind, page, rng, gen_tokens)
                if back is None:
                    results.append(Action(i, kind, st.page, 0.0, False, label))
                    continue
                seconds, why = await request(ws, st, back, timeout_s)
                if kind == "generate" and not why and "fig-gen-kv" not in st.widgets:   # drawn once a step ran
                    why = "the generation left no steps (no KV-cache chart on the page)"
                results.append(Action(i, kind, label, seconds, not why, why))
                if why.startswith("timeout"):
                    break                 # the session is stuck; the rest of its actions are not run
                if a + 1 < n_actions and think_s > 0:
                    await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))
    except (OSError, websockets.WebSocketException, asyncio.TimeoutError) as e:
        results.append(Action(i, "connection", st.page, 0.0, False, f"{type(e).__name__}: {e}"[:200]))


async def drive(base: str, n: int, n_actions: int, think_s: float, timeout_s: float, gen_tokens: int,
                seed: int = 0) -> tuple[list, list]:
    results, students = [], []
    rng = random.Random(seed)
    # the class does not all click at the same instant: first actions are spread over one think time
    starts = [rng.uniform(0, think_s) for _ in range(n)]
    await asyncio.gather(*(student(i, base, n_actions, think_s, timeout_s, gen_tokens, results, students, starts[i], seed)
                           for i in range(n)))
    return results, sorted(students, key=lambda s: s.i)


# ---- the server, as /proc sees it --------------------------------------------------------------------
def tree(pid: int) -> list[int]:
    pids, k = [pid], 0
    while k < len(pids):
        try:
            pids += [int(p) for p in Path(f"/proc/{pids[k]}/task/{pids[k]}/children").read_text().split()]
        except OSError:
            pass
        k += 1
    return pids


def status_kb(pid: int, field_name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of each process (fields 14, 15 of /proc/<pid>/stat)."""
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def smaps(pid: int) -> dict:
    """Rss, Pss, Shared_Clean, Private_Dirty ... of one process, in MB (/proc/<pid>/smaps_rollup)."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            m = re.match(r"(\w+):\s+(\d+) kB", line)
            if m:
                out[m.group(1)] = int(m.group(2)) / 1024
    except OSError:
        pass
    return out


class Servers:
    """1 process: `streamlit run app.py` (load_test.start_server). N: scripts/serve_class.sh N behind HAProxy."""

    def __init__(self, replicas: int, env_extra: dict, port: int | None = None):
        self.replicas, self.proc, self.run_dir = replicas, None, None
        if replicas == 1:
            self.port = port or free_port()
            self.proc = start_server(self.port, env_extra)
            self.pids, self.backends = [self.proc.pid], [self.base]
            return
        self.run_dir = Path(tempfile.mkdtemp(prefix="operator-lab-class-"))
        self.port, first = free_port(), free_port()
        env = {**os.environ, **env_extra, "OPERATOR_LAB_RUN_DIR": str(self.run_dir), "OPERATOR_LAB_PORT": str(self.port),
               "OPERATOR_LAB_FIRST_PORT": str(first), "OPERATOR_LAB_ADDRESS": "127.0.0.1"}
        log = open(self.run_dir / "serve_class.log", "wb")
        self.proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "serve_class.sh"), str(replicas)], cwd=ROOT,
                                     env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve_class.sh exited: see {log.name}")
            if (self.run_dir / "ready").exists():
                break
            time.sleep(0.5)
        else:
            self.stop()
            raise RuntimeError(f"serve_class.sh was not ready in 120 s: see {log.name}")
        self.pids = [int((self.run_dir / f"streamlit-{first + k}.pid").read_text()) for k in range(replicas)]
        self.backends = [f"http://127.0.0.1:{first + k}" for k in range(replicas)]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def all_pids(self) -> list[int]:
        return [p for pid in self.pids for p in tree(pid)]

    def stop(self):
        if self.replicas == 1:
            stop_server(self.proc)
            return
        self.proc.terminate()             # the script's trap stops its servers and HAProxy
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            for pid in self.pids:         # the trap did not finish: stop the servers here
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass


# ---- one measured run ---------------------------------------------------------------------------------
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def run(students: int, actions: int = len(CYCLE), think_s: float = 20.0, timeout_s: float = 120.0, gen_tokens: int = 8,
        replicas: int = 1, env_extra: dict | None = None, seed: int = 0) -> dict:
    load1 = os.getloadavg()[0]
    # a class server does not watch its source: a file saved mid-lesson would reload modules under running sessions
    servers = Servers(replicas, {"STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none", **(env_extra or {})})
    try:
        # warm each process (model load, first trace) with one student at its own port; not counted
        for backend in servers.backends:
            asyncio.run(drive(backend, 1, 2, 0, 300, gen_tokens, seed=99))
        cpu0, t0, c0 = cpu_seconds(servers.all_pids()), time.perf_counter(), time.process_time()
        results, studs = asyncio.run(drive(servers.base, students, actions, think_s, timeout_s, gen_tokens, seed))
        wall, client_cpu = time.perf_counter() - t0, time.process_time() - c0
        pids = servers.all_pids()
        cpu = cpu_seconds(pids) - cpu0
        rss = sum(status_kb(p, "VmRSS") for p in pids) / 1024
        hwm = sum(status_kb(p, "VmHWM") for p in pids) / 1024
        memory = [smaps(p) for p in servers.pids]
    finally:
        servers.stop()
    times = [r.seconds for r in results if r.ok]
    errors = [r for r in results if not r.ok]
    summary = dict(students=students, replicas=replicas, actions=len(results), errors=len(errors), load1=load1,
                   leaks=sum(len(s.leaks) for s in studs), own_missing=[s.i for s in studs if not s.own_seen],
                   p50=statistics.median(times) if times else float("nan"), p95=pct(times, 0.95),
                   max=max(times) if times else float("nan"), wall=wall, cpu=cpu, client_cpu=client_cpu,
                   rss_mb=rss, hwm_mb=hwm, memory=memory, error_list=[vars(e) for e in errors[:10]],
                   by_kind={k: (statistics.median(v), pct(v, 0.95), len(v)) for k in {r.kind for r in results if r.ok}
                            for v in [[r.seconds for r in results if r.ok and r.kind == k]]},
                   think=think_s, per_student=actions, gen_tokens=gen_tokens,
                   backends=dict(sorted(Counter(s.backend.split("=")[-1] or "-" for s in studs).items())))
    failed = {r.student for r in errors}                 # a student whose own prompt never came back: an error too
    summary["errors"] += len([i for i in summary["own_missing"] if i not in failed])
    return summary


HEADER = ("| students | processes | load avg at start | actions | errors | leaks | p50 s | p95 s | max s | wall s | server CPU s "
          "(% of {cores} cores) | client CPU s | server RSS MB (end) | server VmHWM MB |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")


def row(s: dict) -> str:
    cores = os.cpu_count() or 1
    spread = f" (students per process: {', '.join(f'{k} {v}' for k, v in s['backends'].items())})" if s["replicas"] > 1 else ""
    return (f"| {s['students']} | {s['replicas']}{spread} | {s['load1']:.1f} | {s['actions']} | {s['errors']} | {s['leaks']} | {s['p50']:.2f} | "
            f"{s['p95']:.2f} | {s['max']:.2f} | {s['wall']:.0f} | {s['cpu']:.0f} ({100 * s['cpu'] / s['wall'] / cores:.0f}%) | "
            f"{s['client_cpu']:.0f} | {s['rss_mb']:.0f} | {s['hwm_mb']:.0f} |\n")


def memory_rows(s: dict) -> str:
    out = ""
    for k, m in enumerate(s["memory"]):
        out += (f"| {s['students']} | {s['replicas']} | {k + 1} | {m.get('Rss', 0):.0f} | {m.get('Pss', 0):.0f} | {m.get('Shared_Clean', 0):.0f} | "
                f"{m.get('Private_Clean', 0) + m.get('Private_Dirty', 0):.0f} | {m.get('Anonymous', 0):.0f} |\n")
    return out


MEMORY_HEADER = ("| students | processes | process | Rss MB | Pss MB | Shared_Clean MB | Private MB | Anonymous MB |\n"
                 "|---|---|---|---|---|---|---|---|\n")


def write_results(summaries: list, load_avg: str, note: str):
    path = ROOT / "bench" / "RESULTS_load.md"
    old = path.read_text() if path.exists() else ""
    browser = "\n" + old.split("## The browser check", 1)[1].split("\n", 1)[1] if "## The browser check" in old else (
        "\n" + old.replace("# Load test (bench/load_test.py)", "").strip() + "\n")
    s0 = summaries[0]
    text = ("# Load, measured at the protocol (bench/load_protocol.py)\n\n"
            f"One Python process plays every student on Streamlit's own websocket protocol (BackMsg / ForwardMsg). "
            f"Each student, with its own prompt, makes {s0['per_student']} actions taken in this order (and around again): "
            f"{', '.join(k if p is None else f'{k} /{p}' for k, p in CYCLE)}; a generation is {s0['gen_tokens']} "
            f"tokens; think time {s0['think']:g} s per action, jittered x0.5-1.5. Time = request sent -> script_finished. "
            f"Load average at the start: {load_avg}. {note}\n\n" + HEADER.format(cores=os.cpu_count()) +
            "".join(row(s) for s in summaries) +
            "\nPer action kind (p50 / p95 s, count): " + "; ".join(
                f"{s['students']}x{s['replicas']}: " + ", ".join(f"{k} {a:.2f}/{b:.2f} ({n})" for k, (a, b, n) in sorted(s["by_kind"].items()))
                for s in summaries) +
            "\n\nMemory of each Streamlit process at the end (/proc/<pid>/smaps_rollup). The weights are the "
            "memory-mapped model.safetensors of the cache (ops/models/checkpoints.py reads it with safetensors' load_file, "
            "which maps the file): clean file pages, shared through the page cache by every process that maps it. "
            "Shared_Clean: pages that some other process maps too; Pss: each shared page divided among all the processes "
            "that map it (other programs on the machine that load the same cache file included); Private/Anonymous: this "
            "process's own memory (sessions' traces, the bf16/int8 copies built on first use, Python).\n\n"
            + MEMORY_HEADER + "".join(memory_rows(s) for s in summaries) +
            "\n## The browser check (bench/load_test.py)" + browser)
    path.write_text(text)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--students", default="30,60,120",
                    help="comma-separated class sizes, one run each; NxR: N students on R processes (e.g. 60x2)")
    ap.add_argument("--actions", type=int, default=len(CYCLE), help="actions per student")
    ap.add_argument("--think", type=float, default=20.0, help="seconds between one student's actions (jittered)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds an action may take before it is an error")
    ap.add_argument("--gen-tokens", type=int, default=8, help="tokens per generation")
    ap.add_argument("--replicas", type=int, default=1, help="processes for a plain N (2+ runs scripts/serve_class.sh)")
    ap.add_argument("--classroom", action="store_true", help="run the server with OPERATOR_LAB_CLASSROOM=1")
    ap.add_argument("--no-write", action="store_true", help="print only; leave bench/RESULTS_load.md alone")
    ap.add_argument("--note", default="", help="a sentence for RESULTS_load.md (machine, what else ran)")
    a = ap.parse_args()
    load_avg = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"load average at start: {load_avg}; {os.cpu_count()} cores")
    env = {"OPERATOR_LAB_CLASSROOM": "1"} if a.classroom else {}
    summaries = []
    for item in a.students.split(","):
        n, _, replicas = item.partition("x")
        s = run(int(n), a.actions, a.think, a.timeout, a.gen_tokens, int(replicas or a.replicas), env)
        summaries.append(s)
        print(HEADER.format(cores=os.cpu_count()) + row(s), flush=True)
        print("per action kind (p50 / p95 s, count): " + ", ".join(
            f"{k} {a:.2f}/{b:.2f} ({n})" for k, (a, b, n) in sorted(s["by_kind"].items())), flush=True)
        for e in s["error_list"]:
            print("ERROR", e)
        if s["own_missing"]:
            print("students whose own prompt never came back:", s["own_missing"][:20])
        if not a.no_write:                # after every run: a long series interrupted keeps what it measured
            write_results(summaries, load_avg, a.note)
    print(f"\nload average at start: {load_avg}\n" + HEADER.format(cores=os.cpu_count()) + "".join(row(s) for s in summaries))
    print(MEMORY_HEADER + "".join(memory_rows(s) for s in summaries))
    sys.exit(1 if any(s["errors"] or s["leaks"] for s in summaries) else 0)


if __name__ == "__main__":
    main()
