"""Classroom mode: allow-listed model sources (symlinks resolved), per-session limits, isolated sessions."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from classroom import mode as class_mode

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def room(monkeypatch, tmp_path, tiny_hf_folder):
    """An allow-list folder holding one tiny model, plus a model outside it and a symlink leading out."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    inside = tiny_hf_folder("qwen2")
    (allowed / "tiny").symlink_to(inside, target_is_directory=True)   # resolved: its real folder is listed below
    outside = tiny_hf_folder("qwen2")
    (allowed / "escape").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", os.pathsep.join([str(allowed), str(inside)]))
    for k in ("OPERATOR_LAB_MAX_TOKENS", "OPERATOR_LAB_SESSION_MB", "OPERATOR_LAB_CLASSROOM_MAX_BATCH"):
        monkeypatch.delenv(k, raising=False)
    return dict(allowed=allowed, inside=inside, outside=outside)


def test_allow_list_and_symlinks(room):
    assert class_mode.classroom_mode()
    assert class_mode.is_allowed("default")
    assert class_mode.is_allowed(str(room["inside"]))
    assert class_mode.is_allowed(str(room["allowed"] / "tiny"))          # a symlink into the list is fine
    assert not class_mode.is_allowed(str(room["allowed"] / "escape"))    # a symlink out of it is not
    assert not class_mode.is_allowed(str(room["outside"]))
    assert not class_mode.is_allowed("/etc/passwd")
    assert not class_mode.is_allowed(str(room["allowed"] / ".." / "elsewhere"))
    models = class_mode.allowed_models()
    assert "escape" not in models and os.path.realpath(room["inside"]) in models.values()


def test_no_secrets_file_is_fine(monkeypatch, tmp_path):
    import settings

    monkeypatch.setattr(settings, "SECRETS", (tmp_path / "none.toml",))
    monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    assert settings.read(secret_values=settings.secrets(settings.SECRETS)).classroom is False


def test_secrets_turn_classroom_on(monkeypatch, tmp_path):
    """`classroom = true` and `max_tokens = 100` in .streamlit/secrets.toml; the environment wins over the file."""
    import settings

    f = tmp_path / "secrets.toml"
    f.write_text("classroom = true\nmax_tokens = 100\nallowed_models = ['/a', '/b']\n")
    for k in ("OPERATOR_LAB_CLASSROOM", "OPERATOR_LAB_CLASSROOM_MAX_TOKENS", "OPERATOR_LAB_ALLOWED_MODELS"):
        monkeypatch.delenv(k, raising=False)
    s = settings.read(secret_values=settings.secrets((f,)))
    assert s.classroom and s.allowed_models == ("/a", "/b") and s.limits().max_tokens == 100
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM_MAX_TOKENS", "50")
    assert settings.read(secret_values=settings.secrets((f,))).limits().max_tokens == 50
    f.write_text("classroom = [")                                       # not TOML: stops the app, by name
    with pytest.raises(settings.SettingError, match="secrets.toml"):
        settings.secrets((f,))


def test_session_budget_defaults(monkeypatch):
    monkeypatch.delenv("OPERATOR_LAB_SESSION_MB", raising=False)
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    assert class_mode.session_budget_bytes() == 256 * 2**20
    monkeypatch.setenv("OPERATOR_LAB_SESSION_MB", "3")
    assert class_mode.session_budget_bytes() == 3 * 2**20
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "0")
    monkeypatch.delenv("OPERATOR_LAB_SESSION_MB")
    assert class_mode.session_budget_bytes() == 2048 * 2**20


def _app(prompt="I like shanghai"):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = "en"
    at.query_params["prompt"] = prompt
    at.run()
    return at


@pytest.mark.real
def test_app_classroom_sidebar_and_refusal(room):
    at = _app()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not at.text_input                                           # never a free path box
    box = [s for s in at.selectbox if "classroom" in s.label]
    assert box and len(box[0].options) == 2 and "escape" not in box[0].options
    at.session_state["source"] = str(room["allowed"] / "escape")        # forged: not in the list
    at.run()
    assert "not allowed" in " ".join(e.value for e in at.error)
    assert at.session_state.source == "default"


@pytest.mark.real
def test_app_classroom_batch_and_budget(room, monkeypatch):
    at = _app("\n".join(f"student {i}" for i in range(10)))
    assert "only the first 4" in " ".join(w.value for w in at.warning)
    assert _held(at).B == 4
    monkeypatch.setenv("OPERATOR_LAB_SESSION_MB", "1")                   # a full 0.5B trace never fits in 1 MB
    at.session_state["prompt_text"] = "a longer prompt that would need a lot of memory"
    at.run()
    errors = " ".join(e.value for e in at.error)
    assert "memory budget" in errors and "shorter prompt" in errors
    assert len(at.session_state.traces) == 1                            # the last good trace is kept


def _held(at, i: int = -1):
    """Session at's i-th trace (newest: -1) from the one store; the session holds only its key."""
    from ops.engine.store import STORE
    return STORE.peek(list(at.session_state.traces.values())[i])


@pytest.mark.real
def test_sessions_isolated_and_oldest_dropped(monkeypatch):
    """Sessions see their own prompts; the one store keeps what fits its budget, the least recently used trace
    going first, whichever session asked for it."""
    from ops.engine.store import STORE

    monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    monkeypatch.setattr(STORE, "budget", STORE.budget)                 # the test's small budget leaves with it
    a, b = _app("student 1 likes pandas"), _app("student 2 likes tigers")
    ta = [k[3] for k in a.session_state.traces]
    tb = [k[3] for k in b.session_state.traces]
    assert ta == [("student 1 likes pandas",)] and tb == [("student 2 likes tigers",)]
    one = _held(a).nbytes
    monkeypatch.setenv("OPERATOR_LAB_STORE_MB", str(2.5 * one / 2**20))    # room for two traces of this size
    for p in ("student 1 likes cats", "student 1 likes dogs", "student 1 likes owls"):
        a.session_state["prompt_text"] = p
        a.run()
    assert _held(a).prompts == ["student 1 likes owls"] and STORE.nbytes <= STORE.budget
    assert _held(a, 0) is None and _held(b) is None                   # pandas and tigers: the least recently used


@pytest.mark.real
def test_sessions_on_one_prompt_share_one_run(monkeypatch):
    """A class opening the app on one prompt runs the model once: the second session gets the first one's
    trace object, and a session on another prompt gets its own."""
    import ui.state
    from ops.engine.store import STORE

    monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    runs = []
    real = ui.state._trace                   # the one computation behind a session's trace, alone or batched
    monkeypatch.setattr(ui.state, "_trace", lambda model, s, *a: runs.append(list(s.prompts)) or real(model, s, *a))
    prompt = "the class shares this sentence"
    a, b, c = _app(prompt), _app(prompt), _app("one student types another")
    assert _held(a) is _held(b) and _held(c) is not _held(a)
    assert runs.count([prompt]) == 1 and runs.count(["one student types another"]) == 1
    assert STORE.nbytes <= STORE.budget


def test_shared_trace_waits_and_stays_in_budget(monkeypatch):
    """Two threads asking for one key compute it once; the store drops its oldest traces past the budget."""
    import threading

    from ops.engine.store import STORE
    from ui import state

    calls, cond = [], threading.Condition()

    class Busy(dict):
        """STORE.busy, counting the sessions that came for a key's lock."""
        came = 0

        def setdefault(self, key, default):
            with cond:
                Busy.came += 1
                cond.notify_all()
            return super().setdefault(key, default)

    class Sized:
        nbytes = property(lambda self: 10)       # what the store counts for it (ops.engine.store.sizeof)

    def compute():
        calls.append(1)
        if len(calls) == 1:                    # the first run waits until the second session is at the lock
            with cond:
                assert cond.wait_for(lambda: Busy.came == 2, timeout=60), "the second session never asked"
        return Sized()

    monkeypatch.setattr(STORE, "busy", Busy())
    monkeypatch.setattr(STORE, "budget", 25)
    STORE.clear()
    got = []
    threads = [threading.Thread(target=lambda: got.append(state.shared_trace(("test", "k1"), compute)))
               for _ in range(2)]
    [th.start() for th in threads]
    [th.join() for th in threads]
    assert len(calls) == 1 and got[0] is got[1]
    state.shared_trace(("test", "k2"), compute)
    state.shared_trace(("test", "k3"), compute)                  # 30 bytes > 25: the oldest goes
    assert STORE.keys(("test",)) == [("test", "k2"), ("test", "k3")] and len(calls) == 3
    STORE.clear()


@pytest.mark.parametrize("mode", ["classroom", "normal", "normal, little memory", "normal, turned off"])
def test_weight_sets_built_at_load(monkeypatch, tiny_hf_folder, mode):
    """Loading a model starts building, in the background, the weight sets pages would otherwise build on their first
    visit: in classroom mode the int8 set Generate starts on (where the native kernel runs); otherwise the bf16 and
    int8 sets Precision compares, when they fit in a third of the free memory, and none when a test turns it off
    (ui.state.PREBUILD)."""
    import threading

    from ops.fast import native
    from ui import experiments_state, state

    monkeypatch.setattr(state, "FIRST_VISITS", experiments_state.first_visits)       # registered as app.py does

    if mode == "classroom" and native.load() is None:
        pytest.skip(f"no native int8 kernel here ({native.why_not()}): classroom mode starts on the traced path")
    folder = tiny_hf_folder("qwen2")
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", str(folder))
    monkeypatch.setattr(state, "PREBUILD", mode != "normal, turned off")
    if mode == "classroom":
        monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    else:
        monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    if mode == "normal, little memory":
        monkeypatch.setattr(state, "mem_available", lambda: 1000)
    want = {"classroom": {"int8"}, "normal": {torch.bfloat16, "int8"}}.get(mode, set())
    state.load_model.clear()
    try:
        model = state.load_model(str(folder), "cpu", "float32")
        for th in threading.enumerate():
            if th.name == "weight-sets":
                th.join(timeout=60)
        assert set(model._copies) == want
        assert "int8" not in want or model.weight_set("int8") is model._copies["int8"]
        assert torch.bfloat16 not in want or model.weight_set("bf16") is model._copies[torch.bfloat16]
        # outside classroom mode, the pages' shared first-visit work is done too: asking again computes nothing
        from ops.lab import atlas as head_atlas
        from ui import experiments_state, session

        ahead = mode in ("normal", "normal, little memory")
        assert ("merges" in model.tokenizer.__dict__) == ahead
        key = (str(folder), "cpu", "float32")
        monkeypatch.setattr(head_atlas, "induction_trace", lambda *a, **k: pytest.fail("the atlas was recomputed"))
        if ahead:
            assert experiments_state._atlas(*key, experiments_state.ATLAS_SEED, experiments_state.ATLAS_N)["labels"] is not None
            assert experiments_state._shared(experiments_state.precision_key(key, session.DEFAULT_PROMPT, False),
                               lambda: pytest.fail("recomputed")) if mode == "normal" else True
            kind, layer, p = experiments_state.EXPERIMENTS_DEFAULT                  # Experiments' first view
            ids = model.encode_prompts([session.DEFAULT_PROMPT], False)[2][0]
            edited = experiments_state._shared(experiments_state.experiments_key(key, ids, kind, layer, p), lambda: pytest.fail("recomputed"))
            assert edited.layer(layer, "attn.context")[0, :, :model.config.head_dim].abs().max() == 0
    finally:
        state.load_model.clear()
        from ui import experiments_state
        experiments_state._atlas.clear()
        experiments_state._shared.clear()


def test_mem_available_reads_the_kernel():
    from ui import state

    free = state.mem_available()
    assert free == 0 or 2**20 < free < 2**50


def test_background_jobs_wait_for_a_quiet_moment(monkeypatch):
    """The load-time thread's jobs start only when no page run is under way and none ended in the last `quiet` s.
    The clock is the test's: each of the waiter's naps moves it 0.1 s, and its first nap waits for the run to end."""
    import threading
    from types import SimpleNamespace

    from classroom import jobs
    from classroom.jobs import Runs

    clock, looked, ended_run = [100.0], threading.Event(), threading.Event()

    def nap(seconds):
        looked.set()                                          # the waiter looked and found no quiet moment
        assert ended_run.wait(60), "the run never ended"
        clock[0] += seconds

    monkeypatch.setattr(jobs, "time", SimpleNamespace(monotonic=lambda: clock[0], sleep=nap))
    runs, started = Runs(), []
    with runs:
        th = threading.Thread(target=lambda: (runs.wait_quiet(quiet=0.2), started.append(clock[0])))
        th.start()
        assert looked.wait(60)
        assert not started                                   # a run is under way
        ended = clock[0]
    ended_run.set()
    th.join(60)
    assert started and started[0] - ended >= 0.2 - 1e-9     # 0.2 s of the test's clock after the run ended


def test_a_trace_never_outgrows_the_store(monkeypatch):
    """A trace bigger than the store could not be kept, and would run again at every rerun: it is refused instead."""
    monkeypatch.setenv("OPERATOR_LAB_SESSION_MB", "300")
    monkeypatch.setenv("OPERATOR_LAB_STORE_MB", "100")
    assert class_mode.session_budget_bytes() == 100 * 2**20
    monkeypatch.setenv("OPERATOR_LAB_STORE_MB", "1000")
    assert class_mode.session_budget_bytes() == 300 * 2**20
