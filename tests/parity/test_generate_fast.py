"""The generation fast path (bfloat16 copy, SDPA, no record) against the eager float32 runner."""
import pytest
import torch

from ops.model import KVCache
from test_parity_tiny import ARCHS, SMALL, tiny_pair


def _logits_both(model, ids, split):
    """Last-position logits after prefill of ids[:, :split] and one-token steps, eager and fast."""
    T = ids.shape[1]
    eager = KVCache(model.config, 1, T, "cpu", torch.float32)
    fast = KVCache(model.config, 1, T, "cpu", model.fast_dtype())
    out = []
    for a, b in [(0, split)] + [(s, s + 1) for s in range(split, T)]:
        chunk = ids[:, a:b]
        le = model.forward(chunk, torch.arange(a, b)[None], torch.ones(1, b, dtype=torch.bool), cache=eager,
                           last_only=True)[0, -1]
        lf = model.fast_forward(chunk, fast)[0].float()
        out.append((le, lf))
    return out


@pytest.mark.parametrize("arch", list(ARCHS))
def test_fast_forward_matches_eager_within_bf16(arch):
    model, _ = tiny_pair(arch)
    ids = torch.randint(0, SMALL["vocab_size"], (1, 9), generator=torch.Generator().manual_seed(1))
    for le, lf in _logits_both(model, ids, 6):
        d = (le - lf).abs().max().item()
        scale = le.abs().max().item()
        assert d < 0.05 * scale + 0.05, f"{arch}: fast path logits differ by {d} (max |logit| {scale})"


def test_fast_weights_shared_when_already_bf16():
    model, _ = tiny_pair("qwen2")
    from ops import Model

    bf = Model(model.config, {k: v.to(torch.bfloat16) for k, v in model.weights.items()}, dtype="bfloat16")
    fw = bf.fast_weights()
    assert all(fw[k].data_ptr() == bf.weights[k].data_ptr() for k in bf.weights)
    assert model.fast_weights() is model.fast_weights()          # built once


def test_fast_prefill_then_decode_equals_one_prefill():
    """The cache path of fast_forward: prefill + steps == one prefill of the whole sequence (same dtype)."""
    model, _ = tiny_pair("qwen2")
    ids = torch.randint(0, SMALL["vocab_size"], (1, 8), generator=torch.Generator().manual_seed(2))
    whole = model.fast_forward(ids, KVCache(model.config, 1, 8, "cpu", torch.bfloat16))[0].float()
    stepped = _logits_both(model, ids, 5)[-1][1]
    assert (whole - stepped).abs().max().item() < 0.05


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_one_row_linear_goes_through_mv_with_the_same_result(dtype):
    from ops.model import _gemv_linear

    g = torch.Generator().manual_seed(0)
    W = torch.randn(1152, 896, generator=g).to(dtype)
    b = torch.randn(1152, generator=g).to(dtype)
    for shape in [(896,), (1, 896), (1, 1, 896)]:
        x = torch.randn(shape, generator=g).to(dtype)
        for bias in (None, b):
            got, want = _gemv_linear(x, W, bias), torch.nn.functional.linear(x, W, bias)
            assert got.shape == want.shape and got.dtype == want.dtype
            torch.testing.assert_close(got, want, atol=1e-2 if dtype == torch.bfloat16 else 1e-4, rtol=1e-2)
    x = torch.randn(2, 3, 896, generator=g).to(dtype)           # more than one row: F.linear itself
    assert torch.equal(_gemv_linear(x, W, b), torch.nn.functional.linear(x, W, b))
