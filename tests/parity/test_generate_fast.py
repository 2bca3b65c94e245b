"""The generation fast path (the fused bfloat16 copy, SDPA, no record) against the eager float32 runner:
the same forward pass, configured by name (weights="bf16", attention="sdpa")."""
import pytest
import torch
from test_parity_tiny import ARCHS, SMALL, tiny_pair

from ops.engine import functional as fn
from ops.engine.decode import KVCache


def _fast(model, chunk, cache, a, b):
    """Last-position logits (V,) of the fast configuration for ids[:, a:b] after the cache's keys."""
    return model.forward(chunk, torch.arange(a, b)[None], torch.ones(1, b, dtype=torch.bool), cache=cache,
                         last_only=True, weights="bf16", attention="sdpa")[0, -1].float()


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
        out.append((le, _fast(model, chunk, fast, a, b)))
    return out


@pytest.mark.parametrize("arch", list(ARCHS))
def test_fast_path_matches_eager_within_bf16(arch):
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
    """The cache path of the fast configuration: prefill + steps == one prefill of the whole sequence."""
    model, _ = tiny_pair("qwen2")
    ids = torch.randint(0, SMALL["vocab_size"], (1, 8), generator=torch.Generator().manual_seed(2))
    whole = _fast(model, ids, KVCache(model.config, 1, 8, "cpu", torch.bfloat16), 0, 8)
    stepped = _logits_both(model, ids, 5)[-1][1]
    assert (whole - stepped).abs().max().item() < 0.05


def test_fast_chunk_after_cache_uses_the_mask():
    """A block of several tokens after cached keys (SDPA with an explicit mask) == one prefill."""
    model, _ = tiny_pair("qwen2")
    ids = torch.randint(0, SMALL["vocab_size"], (1, 8), generator=torch.Generator().manual_seed(3))
    whole = _fast(model, ids, KVCache(model.config, 1, 8, "cpu", torch.bfloat16), 0, 8)
    cache = KVCache(model.config, 1, 8, "cpu", torch.bfloat16)
    _fast(model, ids[:, :3], cache, 0, 3)
    assert (whole - _fast(model, ids[:, 3:], cache, 3, 8)).abs().max().item() < 0.05


def test_fast_copy_fuses_projections():
    """A real copy fuses q|k|v and gate|up into one product each; the parts are gone from it."""
    model, _ = tiny_pair("qwen2")
    W = model.fast_weights()
    a, m = "model.layers.0.self_attn.", "model.layers.0.mlp."
    assert W[a + "qkv_proj.weight"].dtype == torch.bfloat16 and a + "q_proj.weight" not in W
    assert W[m + "gate_up_proj.weight"].shape[0] == 2 * model.config.intermediate_size
    assert torch.equal(W[a + "qkv_proj.bias"], torch.cat([model.w(a + f"{x}_proj.bias") for x in "qkv"]).bfloat16())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_one_row_linear_goes_through_mv_with_the_same_result(dtype):
    g = torch.Generator().manual_seed(0)
    W = torch.randn(1152, 896, generator=g).to(dtype)
    b = torch.randn(1152, generator=g).to(dtype)
    for shape in [(896,), (1, 896), (1, 1, 896)]:
        x = torch.randn(shape, generator=g).to(dtype)
        for bias in (None, b):
            got, want = fn.linear(x, W, bias), torch.nn.functional.linear(x, W, bias)
            assert got.shape == want.shape and got.dtype == want.dtype
            torch.testing.assert_close(got, want, atol=1e-2 if dtype == torch.bfloat16 else 1e-4, rtol=1e-2)
            mv = torch.mv(W, x.reshape(-1))
            mv = (mv if bias is None else mv + bias).reshape(want.shape)
            if dtype == torch.bfloat16:                            # 16 bits, one row: torch.mv, bitwise
                assert torch.equal(got, mv)
            else:                                                  # float32: F.linear, bitwise as before
                assert torch.equal(got, want)
    x = torch.randn(2, 3, 896, generator=g).to(dtype)           # more than one row: F.linear itself
    assert torch.equal(fn.linear(x, W, b), torch.nn.functional.linear(x, W, b))
