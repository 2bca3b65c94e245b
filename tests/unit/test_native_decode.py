"""ops/fast/native/decode.c: RMSNorm, RoPE and one-token attention in C, run by the one forward pass with
kernels="native" (the int8 decode path). Each against its ops/engine/functional.py / SDPA twin.

Tolerances are from a measured spread (this AMD EPYC VM, 200 random cases each): RMSNorm 3.5e-7 relative (the
sum of squares in 8 lanes, not ATen's order) -> rtol 2e-6; attention 4.6e-6 absolute against float64 for
T up to 700 and scores of a few units (Cephes' exp polynomial, ~1 ulp, and a different order of sums) -> 4e-5;
the bundled model's logits over 12 cached decode steps, native against torch kernels, 1.5e-5 (of |logits| up
to 26), SmolLM2-135M's 3.8e-5 (of up to 34) -> 2e-4. RoPE does the same multiplications and adds in the same
order, unfused (-ffp-contract=off): the same bits.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ops.engine import functional as fn, model as model_module
from ops.engine.decode import PATHS, KVCache
from ops.errors import InputError
from ops.fast import native
from tests.unit.test_int8 import tiny_dense

needs_native = pytest.mark.skipif(native.load() is None, reason=f"no native kernels here: {native.why_not()}")


@needs_native
@pytest.mark.parametrize("shape", [(1, 1, 896), (2, 5, 576), (3, 37), (4, 64)])
def test_rms_norm_matches_functional(shape):
    g = torch.Generator().manual_seed(0)
    for scale in (1e-2, 1.0, 1e2):
        x, w = torch.randn(shape, generator=g) * scale, torch.randn(shape[-1], generator=g)
        torch.testing.assert_close(native.rms_norm(x, w, 1e-6), fn.rms_norm(x, w, 1e-6), rtol=2e-6, atol=0)


@needs_native
@pytest.mark.parametrize("B,n,S,hd", [(1, 14, 1, 64), (1, 2, 1, 64), (2, 3, 5, 16), (1, 9, 1, 64)])
def test_rope_gives_the_same_bits(B, n, S, hd):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, n, S, hd, generator=g)
    cos, sin = fn.rope_cos_sin(torch.arange(40, 40 + S)[None].expand(B, S), hd, 1e6)
    assert torch.equal(native.apply_rope(x, cos, sin), fn.apply_rope(x, cos, sin))


def _sdpa64(q, k, v):
    nh, hd = q.shape[1], q.shape[3]
    ctx = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), enable_gqa=nh != k.shape[1])
    return ctx.transpose(1, 2).reshape(q.shape[0], 1, nh * hd)


@needs_native
@pytest.mark.parametrize("nh,nkv,hd", [(14, 2, 64), (9, 3, 64), (8, 8, 128), (4, 1, 16), (2, 1, 256)])
@pytest.mark.parametrize("T", [1, 7, 9, 130, 1300])       # tails past 8 lanes; 1300 x 7 queries: heap scores, threads
def test_attention1_matches_float64_sdpa(nh, nkv, hd, T):
    g = torch.Generator().manual_seed(T)
    B = 2 if T == 9 else 1
    q = torch.randn(B, nh, 1, hd, generator=g) * 3
    kc, vc = torch.randn(B, nkv, T + 5, hd, generator=g) * 3, torch.randn(B, nkv, T + 5, hd, generator=g)
    k, v = kc[:, :, :T], vc[:, :, :T]                       # views of a longer cache, as KVCache.update gives
    out = native.attention1(q, k, v)
    assert out.shape == (B, 1, nh * hd)
    torch.testing.assert_close(out.double(), _sdpa64(q, k, v), rtol=0, atol=4e-5)


@needs_native
def test_attention1_declines_what_it_does_not_do():
    q, k = torch.randn(1, 4, 1, 16), torch.randn(1, 2, 5, 16)
    assert native.attention1(q, k, k) is not None
    assert native.attention1(torch.randn(1, 4, 2, 16), k, k) is None                       # two queries
    assert native.attention1(q.bfloat16(), k.bfloat16(), k.bfloat16()) is None            # 16 bits
    assert native.attention1(torch.randn(1, 4, 1, 12), torch.randn(1, 2, 5, 12), torch.randn(1, 2, 5, 12)) is None
    assert native.attention1(q, k.transpose(2, 3).contiguous().transpose(2, 3), k) is None  # keys not rows


def test_the_twins_take_what_the_kernels_do_not():
    """bfloat16, a non-contiguous input, or no library at all: the result is ops/engine/functional.py's own."""
    x, w = torch.randn(2, 3, 64).bfloat16(), torch.randn(64).bfloat16()
    assert torch.equal(native.rms_norm(x, w, 1e-6), fn.rms_norm(x, w, 1e-6))
    xt = torch.randn(1, 3, 4, 16).transpose(1, 2)                                  # (1, 4, 3, 16), not contiguous
    cos, sin = fn.rope_cos_sin(torch.arange(3)[None], 16, 1e4)
    assert torch.equal(native.apply_rope(xt, cos, sin), fn.apply_rope(xt, cos, sin))


def test_no_library_means_torch_operators(monkeypatch):
    monkeypatch.setitem(native._state, "lib", None)
    x, w = torch.randn(1, 1, 64), torch.randn(64)
    assert torch.equal(native.rms_norm(x, w, 1e-6), fn.rms_norm(x, w, 1e-6))
    assert native.attention1(torch.randn(1, 4, 1, 16), torch.randn(1, 2, 5, 16), torch.randn(1, 2, 5, 16)) is None


def test_kernels_is_checked_by_name():
    m = tiny_dense()
    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(InputError, match="kernels must be one of"):
        m.forward(ids, torch.arange(3)[None], torch.ones(1, 3, dtype=torch.bool), kernels="c++")


def _decode(model, ids, kernels, weights="int8", n=12):
    """Prefill, then n - 1 cached single-token steps, greedy: (logits of every step (n, V), tokens)."""
    cache = KVCache(model.config, 1, len(ids) + n + 1, "cpu", torch.float32)
    out, toks, x, past = [], [], torch.tensor([ids]), 0
    with torch.inference_mode():
        for _ in range(n):
            S = x.shape[1]
            lg = model.forward(x, torch.arange(past, past + S)[None], torch.ones(1, past + S, dtype=torch.bool),
                               cache=cache, last_only=True, weights=weights, attention="sdpa", kernels=kernels)[0, -1]
            past += S
            out.append(lg)
            toks.append(int(lg.argmax()))
            x = torch.tensor([[toks[-1]]])
    return torch.stack(out), toks


@needs_native
def test_native_kernels_in_the_forward_pass_tiny_model(monkeypatch):
    """The same pass with kernels="native": the one-token attention runs in C on every cached step, and the
    logits agree with torch's kernels."""
    m = tiny_dense(3)
    calls = []
    real = native.attention1

    def spy(q, k, v):
        out = real(q, k, v)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(native, "attention1", spy)
    a, ta = _decode(m, [5, 9, 14, 2, 7], "torch")
    assert calls == []
    b, tb = _decode(m, [5, 9, 14, 2, 7], "native")
    L = m.config.num_hidden_layers
    assert calls == [False] * L + [True] * (11 * L)          # the 5-token prefill declined (SDPA's), then C
    torch.testing.assert_close(b, a, rtol=0, atol=2e-4)
    assert ta == tb


def test_the_int8_path_asks_for_native_kernels():
    assert PATHS["int8"] == ("int8", "sdpa", "native")
    assert PATHS["bf16"][2] == PATHS["eager"][2] == "torch"
    assert model_module.KERNELS["torch"][:2] == (fn.rms_norm, fn.apply_rope)


@pytest.mark.real
@needs_native
def test_native_kernels_on_the_bundled_model(real_model):
    ids = real_model.encode_prompts("Explain the KV cache in one sentence.", chat=True)[2][0]
    for weights in ("int8", "model"):
        a, ta = _decode(real_model, ids, "torch", weights)
        b, tb = _decode(real_model, ids, "native", weights)
        torch.testing.assert_close(b, a, rtol=0, atol=2e-4)
        assert ta == tb, weights


# ---- the decoder's greedy pick ------------------------------------------------------------------------------
def test_greedy_pick_is_torch_argmax_the_first_largest():
    from ops.engine.sampling import SamplingParams, sample_stages
    x = torch.randn(151_936)
    x[[900, 77_000]] = x.max() + 1                      # a tie for the largest: the first index wins
    assert sample_stages(x, [], SamplingParams())["chosen"] == int(torch.argmax(x)) == 900


@pytest.mark.real
@needs_native
def test_native_kernels_on_smollm2(smollm2_gguf_path):
    """llama, 9 query heads on 3 KV heads, H = 576: the same agreement as on the bundled model."""
    import ops
    m = ops.load_model(str(smollm2_gguf_path))
    ids = m.encode_prompts("Explain the KV cache in one sentence.", chat=True)[2][0]
    a, ta = _decode(m, ids, "torch")
    b, tb = _decode(m, ids, "native")
    torch.testing.assert_close(b, a, rtol=0, atol=2e-4)
    assert ta == tb
