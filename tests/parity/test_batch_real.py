"""Continuous batching on the bundled model (Qwen2.5-Coder-0.5B): decodings of prompts of different lengths, with
different settings, joining at different steps, stepped together through the batcher (classroom/batcher.py) give each
the tokens and the logits of its decoding alone. int8 (the classroom's path): bit for bit, as the native kernel's
rows do not see each other; float32: within the engine's parity bound for logits, 1e-4 (tests/parity), here
relative to the logits' scale (|logit| up to ~30 on this model): measured max |diff| is reported by the assert."""
import pytest
import torch

from classroom.batcher import Batcher
from ops.engine import batch
from ops.engine.sampling import SamplingParams
from ops.fast import native

pytestmark = pytest.mark.real

ROWS = [("The capital of France is", SamplingParams(), 10),
        ("def quicksort(xs):\n    ", SamplingParams(temperature=0.8, top_k=40, seed=5), 7),
        ("上海是中国最大的城市之一，它的历史", SamplingParams(temperature=1.0, top_p=0.9, repetition_penalty=1.2, seed=9), 9)]
JOIN = [0, 2, 3]                       # the step at which each decoding joins (after its prefill, alone)


def decoders(model, path):
    fast = None if path == "eager" else path
    return [model.decoder(p, chat=False, max_new_tokens=n, params=s, fast=fast, stop_at_eos=False)
            for p, s, n in ROWS]


@pytest.mark.parametrize("path", ["int8", "eager"])
def test_batched_decode_on_the_bundled_model_equals_each_alone(real_model, path, monkeypatch):
    torch.manual_seed(0)
    # the batched pass itself, not its row-by-row fallback (a broken pass fell back to it unseen)
    monkeypatch.setattr(batch, "alone", lambda d: pytest.fail("the batched pass failed; its rows ran alone"))
    refs = decoders(real_model, path)
    for d in refs:
        while not d.done:
            d.step()
    ds, b, active, sizes = decoders(real_model, path), Batcher(cap=8), [], []
    for step in range(30):
        for j, at in enumerate(JOIN):
            if at == step:
                ds[j].step()
                active.append(ds[j])
        active = [d for d in active if not d.done]
        if not active and step > max(JOIN):
            break
        tickets = [b.submit(d) for d in active]
        sizes.append(b.run_once())
        for t in tickets:
            t.wait(b)
    assert max(sizes) == 3
    exact = path == "int8" and native.load() is not None
    for ref, d in zip(refs, ds):
        assert d.token_ids == ref.token_ids
        for sa, sb in zip(ref.steps, d.steps, strict=True):
            diff = max(abs(x - y) for x, y in zip(sa.stages["logits"], sb.stages["logits"]))
            assert diff == 0 if exact else diff < 1e-4 * max(1.0, max(map(abs, sa.stages["logits"]))), diff
