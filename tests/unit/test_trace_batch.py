"""New prompts traced together (ops.engine.batch.trace_together, classroom/tracer.py): requests of different lengths, in
Chinese and English, one of them several rows, right-padded into one pass, give each request the trace of its prompts
alone (Model.trace): the same token ids, lengths, names, shapes, recipes, and every recorded tensor within a bound;
a failure in one request reaches only its own; a session that leaves frees its place; the batcher's cap and memory
budget hold.

The reference is Model.trace of the request's prompts alone (batch of its own rows). Padding to a longer row changes
the shapes of the products, so float32 may round differently: on an AMD EPYC these tiny models differed by at most
1.2e-6 (dense) and 4.5e-6 (MoE) of each tensor's largest magnitude (at least 1); the bound is 5e-5 of it, where another
row's numbers, or a mask of the wrong length, differ by order 1. The bundled model:
tests/parity/test_trace_batch_real.py. Threads are synchronised by the batcher's own events: no sleeps, no clocks.
"""
from __future__ import annotations

import threading

import pytest
import torch
from conftest import TINY, tiny_tokenizer

from classroom.tracer import Tracer
from ops.engine import batch, inputs
from ops.engine.config import ModelConfig
from ops.engine.model import Model
from ops.models.checkpoints import expected_shapes

# (prompts of one request): different lengths, zh and en, one request of two rows
REQUESTS = [["the cat sat on the mat"], ["上海是中国最大的城市"], ["x"], ["in the hall he sat", "猫坐在垫子上"]]
WORST = {}
RELATIVE = 5e-5                       # of the tensor's largest |value| (at least 1): see the module's docstring


def tiny_model(moe: bool = False):
    """A 2-layer qwen2 (or qwen2_moe) with seeded random weights, scaled so its logits are not all near-ties."""
    extra = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32) if moe else {}
    c = ModelConfig(model_type="qwen2_moe" if moe else "qwen2", name="tiny", **TINY, **extra,
                    max_position_embeddings=512)
    g = torch.Generator().manual_seed(0)
    w = {n: torch.ones(s) if n.endswith("norm.weight") else torch.randn(s, generator=g) * (3.0 / s[-1] ** 0.5)
         for n, s in expected_shapes(c).items()}
    return Model(c, w, tokenizer=tiny_tokenizer(), device="cpu")


@pytest.fixture(scope="module", params=["dense", "moe"])
def tiny(request):
    return tiny_model(request.param == "moe")


def prepared(model, prompts):
    return model.prepare_trace(prompts)


def assert_same_trace(got, want):
    """got equals want: ids, lengths, texts, names in order, shapes, which are recipes, every tensor within the bound
    (recipes read back through the trace, so a recipe on the wrong mask would show)."""
    assert got.prompts == want.prompts and got.texts == want.texts and got.lengths == want.lengths
    assert torch.equal(got.token_ids, want.token_ids)
    assert got.names() == want.names() and got.shapes() == want.shapes()
    assert got.nbytes == want.nbytes and got.full_nbytes == want.full_nbytes
    for name in want.names():
        assert got.is_recomputed(name) == want.is_recomputed(name), name
        a, b = got[name], want[name]
        assert a.shape == b.shape and a.dtype == b.dtype, name
        if a.dtype == torch.long:
            assert torch.equal(a, b), name
            continue
        finite = torch.isfinite(b)                      # the scores' masked places: -inf in both
        assert torch.equal(finite, torch.isfinite(a)) and torch.equal(a[~finite], b[~finite]), name
        a, b = a[finite], b[finite]
        scale = max(1.0, b.abs().max().item())
        d = (a - b).abs().max().item()
        WORST[name.split(".", 2)[-1]] = max(WORST.get(name.split(".", 2)[-1], 0.0), d / scale)
        assert d <= RELATIVE * scale, f"{name}: differs by {d} (scale {scale})"


def test_traced_together_equals_each_alone(tiny):
    alone = [tiny.trace(p) for p in REQUESTS]
    layers = []
    got = batch.trace_together(tiny, [prepared(tiny, p) for p in REQUESTS], on_layer=layers.append)
    assert layers == list(range(tiny.config.num_hidden_layers))          # one pass for all four
    widths = [t.S for t in alone]
    assert len(set(widths)) > 2                                          # the rows were padded differently
    for g, a in zip(got, alone, strict=True):
        assert_same_trace(g, a)


def test_a_trace_holds_its_own_memory(tiny):
    """Each request's tensors are copies of its rows only: the padded batch's storage is not kept alive."""
    got = batch.trace_together(tiny, [prepared(tiny, p) for p in REQUESTS[:3]])
    for t in got:
        for name in t.names():
            x = t.tensors[name]
            if isinstance(x, torch.Tensor) and name not in ("rope.inv_freq_base", "rope.inv_freq"):
                assert x.untyped_storage().nbytes() == x.numel() * x.element_size(), name


def test_a_failure_reaches_only_its_request(tiny):
    """A request whose ids the embedding cannot read fails the shared pass; run again one by one, it alone fails."""
    reqs = [prepared(tiny, p) for p in REQUESTS[:3]]
    prompts, texts, rows = reqs[1]
    reqs[1] = (prompts, texts, [[tiny.config.vocab_size + 5] + rows[0][1:]])
    got = batch.trace_together(tiny, reqs)
    assert isinstance(got[1], Exception)
    for i in (0, 2):
        assert_same_trace(got[i], tiny.trace(REQUESTS[i]))


class Left(BaseException):
    """What Streamlit raises in a script whose user left (a BaseException, as its StopException is)."""


def leave(layer):
    raise Left


def test_the_cap_the_budget_and_the_model_split_passes(tiny):
    other = tiny_model(moe=tiny.config.num_experts == 0)
    reqs = [prepared(tiny, p) for p in REQUESTS]                         # rows 1, 1, 1, 2; 16, 30, 1, 18 tokens
    t = Tracer(cap=3, budget=inputs.estimate_trace_bytes(tiny.config, 3, 30))
    tickets = [t.submit(tiny, *r) for r in reqs]
    assert t.run_once() == 3 and t.run_once() == 1                       # 3 rows, then the 2-row request
    lone = t.submit(other, *prepared(other, REQUESTS[0]))
    mine = t.submit(tiny, *reqs[0])
    assert t.run_once() == 1 and lone.done.is_set() and not mine.done.is_set()   # one model a pass
    assert t.run_once() == 1
    for k, tk in enumerate(tickets):
        assert_same_trace(tk.wait(t), tiny.trace(REQUESTS[k]))
    recs = t.records()                                                   # what the Serving page's panel reads
    assert [(r.requests, r.rows) for r in recs] == [(3, 3), (1, 2), (1, 1), (1, 1)] and t.passes == [3, 1, 1, 1]
    assert all(r.seconds > 0 for r in recs) and [r.ended for r in recs] == sorted(r.ended for r in recs)
    small = Tracer(cap=8, budget=inputs.estimate_trace_bytes(tiny.config, 1, 100))
    wide = prepared(tiny, ["the cat sat on the mat " * 6])                # 92 tokens: 1 + 92 fit, 2 x 92 do not
    a, b = small.submit(tiny, *reqs[2]), small.submit(tiny, *wide)
    assert small.run_once() == 1 and a.done.is_set() and small.run_once() == 1 and b.done.is_set()


def test_a_session_that_leaves_frees_its_place(tiny):
    t = Tracer(cap=8, budget=2**40)
    reqs = [prepared(tiny, p) for p in REQUESTS[:3]]
    t0, t1, t2 = (t.submit(tiny, *r) for r in reqs)
    with pytest.raises(Left):
        t1.wait(t, on_layer=leave, poll_s=0)            # its user leaves while it waits: out of the queue at once
    assert t.queued() == 2 and t.run_once() == 2 and t1.result is None
    assert_same_trace(t2.wait(t), tiny.trace(REQUESTS[2]))


def test_the_thread_traces_sessions_asking_at_once(tiny):
    """Three sessions in their own threads, as Streamlit runs them, each asking for its trace: the thread waits (the
    window is long) until the rows reach the cap, then traces all three in one pass; each gets its trace alone."""
    stop, threads = threading.Event(), []

    def spawn(loop):
        th = threading.Thread(target=loop, args=(stop,))
        th.start()
        threads.append(th)
        return th

    t = Tracer(cap=3, budget=2**40, window=600.0, spawn=spawn)
    got, errors = {}, []

    def session(k):
        try:
            got[k] = t.submit(tiny, *prepared(tiny, REQUESTS[k])).wait(t)
        except Exception as e:
            errors.append(e)
    sessions = [threading.Thread(target=session, args=(k,)) for k in range(3)]
    for s in sessions:
        s.start()
    for s in sessions:
        s.join()
    stop.set()
    threads[0].join()
    assert not errors and list(t.passes) == [3]
    for k in range(3):
        assert_same_trace(got[k], tiny.trace(REQUESTS[k]))


def test_trace_view_by_hand():
    """ops/lab/serving_batching.trace_view on passes worked by hand: prompts 1 (200, 300 ms), 3 (450 ms), 8 (1000, 1200 ms),
    1 (250 ms) last. A pass of one: median(200, 300, 250) = 250 ms; eight alone 8 x 250 = 2000 ms against the median
    1100 ms of a pass of eight: 0.55."""
    from classroom.tracer import PassRecord
    from ops.lab.serving_batching import trace_view

    recs = [PassRecord(1, 1, 0.2, 1.0), PassRecord(2, 3, 0.45, 2.0), PassRecord(1, 1, 0.3, 3.0),
            PassRecord(8, 8, 1.0, 4.0), PassRecord(5, 8, 1.2, 5.0), PassRecord(1, 1, 0.25, 6.0)]
    v = trace_view(recs)
    assert (v["passes"], v["max"], v["last"]) == (6, 8, 1)
    assert v["mean"] == pytest.approx(22 / 6) and v["sessions_mean"] == pytest.approx(18 / 6)
    assert v["one_ms"] == pytest.approx(250)
    assert [(r["rows"], r["passes"]) for r in v["by_rows"]] == [(1, 3), (3, 1), (8, 2)]
    three, eight = v["by_rows"][1], v["by_rows"][2]
    assert three["ms"] == pytest.approx(450) and three["alone_ms"] == pytest.approx(750)
    assert three["vs_alone"] == pytest.approx(0.6)
    assert eight["ms"] == pytest.approx(1100) and eight["alone_ms"] == pytest.approx(2000)
    assert eight["vs_alone"] == pytest.approx(0.55)
    none_alone = trace_view(recs[3:5])                                   # no pass of one prompt to compare
    assert none_alone["one_ms"] is None and none_alone["by_rows"][0]["vs_alone"] is None
    assert trace_view([]) == dict(passes=0, mean=0.0, max=0, last=0, sessions_mean=0.0, one_ms=None, by_rows=[])
