"""Each operator of ops/engine/functional.py against PyTorch's own implementation, and the trace identities."""
import pytest
import torch
import torch.nn.functional as F

from ops.engine import functional as fn

torch.manual_seed(0)


def maxdiff(a, b):
    return (a.float() - b.float()).abs().max().item()


def test_embedding_is_f_embedding():
    table = torch.randn(50, 16)
    ids = torch.randint(0, 50, (3, 7))
    assert maxdiff(fn.embedding(ids, table), F.embedding(ids, table)) == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_is_f_rms_norm(dtype):
    x = (torch.randn(2, 5, 64) * 3).to(dtype)
    w = torch.randn(64).to(dtype)
    ours = fn.rms_norm(x, w, 1e-6)
    ref = F.rms_norm(x.float(), (64,), w.float(), 1e-6)
    tol = 1e-5 if dtype == torch.float32 else 3e-2
    assert maxdiff(ours, ref) < tol * ref.abs().max()


def test_rms_norm_output_has_unit_rms_before_gamma():
    x = torch.randn(4, 128) * 7 + 2
    y = fn.rms_norm(x, torch.ones(128), 1e-6)
    torch.testing.assert_close(y.pow(2).mean(-1).sqrt(), torch.ones(4), atol=1e-5, rtol=0)


def test_attention_equals_sdpa_causal():
    B, nh, nkv, S, hd = 2, 6, 2, 9, 16
    q, k, v = torch.randn(B, nh, S, hd), torch.randn(B, nkv, S, hd), torch.randn(B, nkv, S, hd)
    pos = torch.arange(S)[None].expand(B, S)
    mask = fn.attention_mask(torch.ones(B, S, dtype=torch.bool), pos, pos)
    kr, vr = fn.repeat_kv(k, nh // nkv), fn.repeat_kv(v, nh // nkv)
    probs = fn.softmax(fn.attention_scores(q, kr, mask))
    ours = fn.attention_context(probs, vr)
    ref = F.scaled_dot_product_attention(q, kr, vr, is_causal=True).transpose(1, 2).reshape(B, S, nh * hd)
    assert maxdiff(ours, ref) < 1e-5
    assert probs.triu(1).abs().max() == 0, "a query saw a later key"
    torch.testing.assert_close(probs.sum(-1), torch.ones(B, nh, S))


def test_softmax_runs_in_float32_and_matches_torch():
    s = torch.randn(3, 11) * 30
    assert maxdiff(fn.softmax(s), torch.softmax(s, -1)) < 1e-7
    half = fn.softmax(s.to(torch.bfloat16))
    assert half.dtype == torch.bfloat16 and torch.isfinite(half.float()).all()


def test_padding_mask_hides_padded_keys():
    key_valid = torch.tensor([[True, True, True, False]])
    pos = torch.arange(4)[None]
    mask = fn.attention_mask(key_valid, pos, pos)[0, 0]
    assert torch.isinf(mask[3, 3]) and mask[3, :3].eq(0).all()
    assert torch.isinf(mask[0, 1:]).all()


def test_swiglu_is_silu_gate_times_up():
    x = torch.randn(5, 32)
    wg, wu, wd = torch.randn(48, 32), torch.randn(48, 32), torch.randn(32, 48)
    gate, up, act, out = fn.swiglu(x, wg, wu, wd)
    assert maxdiff(act, F.silu(x @ wg.T) * (x @ wu.T)) < 1e-5
    assert maxdiff(act, (x @ wg.T) * torch.sigmoid(x @ wg.T) * (x @ wu.T)) < 1e-4
    assert maxdiff(out, act @ wd.T) < 1e-4


def test_rope_rotates_pairs_and_keeps_norms():
    hd, theta = 8, 10000.0
    pos = torch.arange(5)[None]
    cos, sin = fn.rope_cos_sin(pos, theta ** -(torch.arange(0, hd, 2) / hd))
    x = torch.randn(1, 1, 5, hd)
    y = fn.apply_rope(x, cos, sin)
    half = hd // 2
    for j in range(half):                       # pair (j, j + hd/2) turned by pos * theta^(-2j/hd)
        angle = pos[0].float() * theta ** (-2 * j / hd)
        a, b = x[0, 0, :, j], x[0, 0, :, j + half]
        torch.testing.assert_close(y[0, 0, :, j], a * angle.cos() - b * angle.sin())
        torch.testing.assert_close(y[0, 0, :, j + half], b * angle.cos() + a * angle.sin())
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(y[..., 0, :], x[..., 0, :])   # position 0 is not rotated


def test_rope_scores_depend_only_on_relative_position():
    hd = 16
    q, k = torch.randn(1, 1, 1, hd), torch.randn(1, 1, 1, hd)
    def score(pq, pk):
        cq, sq = fn.rope_cos_sin(torch.tensor([[pq]]), 1e6 ** -(torch.arange(0, hd, 2) / hd))
        ck, sk = fn.rope_cos_sin(torch.tensor([[pk]]), 1e6 ** -(torch.arange(0, hd, 2) / hd))
        return (fn.apply_rope(q, cq, sq) * fn.apply_rope(k, ck, sk)).sum()
    torch.testing.assert_close(score(7, 3), score(104, 100), atol=1e-4, rtol=1e-4)


def test_repeat_kv_shares_each_kv_head_with_its_group():
    k = torch.randn(1, 2, 3, 4)
    r = fn.repeat_kv(k, 3)
    assert r.shape == (1, 6, 3, 4)
    for h in range(6):
        assert torch.equal(r[:, h], k[:, h // 3])


def test_moe_routes_each_token_to_its_top_k_experts():
    torch.manual_seed(1)
    N, H, I, E, k = 6, 16, 8, 4, 2
    x = torch.randn(N, H)
    router = torch.randn(E, H)
    experts = [(torch.randn(I, H), torch.randn(I, H), torch.randn(H, I)) for _ in range(E)]
    out, probs, idx, w = fn.moe(x, router, experts, k, norm_topk_prob=True)
    for n in range(N):                           # the sum written out token by token
        expect = sum(w[n, j] * fn.swiglu(x[n:n + 1], *experts[idx[n, j]])[3][0] for j in range(k))
        assert maxdiff(out[n], expect) < 1e-4
    torch.testing.assert_close(w.sum(-1), torch.ones(N))
    assert torch.equal(idx, probs.topk(k).indices)


def test_lm_head_is_a_matmul_with_the_vocab_table():
    x, w = torch.randn(2, 3, 16), torch.randn(40, 16)
    assert maxdiff(fn.lm_head(x, w), x @ w.T) < 1e-5
