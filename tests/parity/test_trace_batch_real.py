"""New prompts traced together on the bundled model (Qwen2.5-Coder-0.5B, float32): requests of different lengths, in
Chinese and English (one of two rows), traced in one padded pass (ops.engine.batch.trace_together) give each the trace
of its prompts alone (Model.trace): the same token ids, names, shapes and recipes, and every recorded tensor within
the engine's parity bound for a padded batch against a prompt alone (tests/parity/test_parity_real.py: logits within
5e-3 where |logit| < 30, about 2e-4 of the largest), here 2e-4 of each tensor's largest magnitude (at least 1).
Measured on an AMD EPYC: worst 1.6e-5 (attn.probs), then 4.7e-6 (mlp.gate); the test prints its worst three."""
import pytest
import torch

from ops.engine import batch

pytestmark = pytest.mark.real

REQUESTS = [["The capital of France is"], ["上海是中国最大的城市之一，它的历史"],
            ["def quicksort(xs):\n    return sorted(xs)", "注意力机制让每个词元看向前面"], ["Once upon a time there was a"]]
RELATIVE = 2e-4


def test_traced_together_on_the_bundled_model_equals_each_alone(real_model):
    got = batch.trace_together(real_model, [real_model.prepare_trace(p) for p in REQUESTS])
    worst = {}
    for g, prompts in zip(got, REQUESTS, strict=True):
        want = real_model.trace(prompts)
        assert g.prompts == want.prompts and g.lengths == want.lengths and torch.equal(g.token_ids, want.token_ids)
        assert g.names() == want.names() and g.shapes() == want.shapes()
        for name in want.names():
            assert g.is_recomputed(name) == want.is_recomputed(name), name
            a, b = g[name], want[name]
            if a.dtype == torch.long:
                assert torch.equal(a, b), name
                continue
            finite = torch.isfinite(b)                  # the scores' masked places: -inf in both
            assert torch.equal(finite, torch.isfinite(a)), name
            a, b = a[finite], b[finite]
            rel = (a - b).abs().max().item() / max(1.0, b.abs().max().item())
            part = name.split(".", 2)[-1]
            worst[part] = max(worst.get(part, 0.0), rel)
    top = sorted(worst.items(), key=lambda kv: -kv[1])[:3]
    print("worst relative differences:", top)
    assert top[0][1] <= RELATIVE, top
    assert len({t.S for t in got}) == len(got)          # each request was cut to its own width
