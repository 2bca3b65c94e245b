"""The head atlas on a tiny Qwen2 whose heads are a previous-token head and an induction head by construction.

tests/unit/test_atlas.py feeds the atlas hand-drawn attention patterns; here the patterns come out of the real
forward pass (ops.engine.model.Model: RMSNorm, q/k/v with bias, RoPE, causal softmax, o_proj) of a 2-layer, 1-head
model whose weights are set by hand, and ops/lab/atlas.head_scores measures them on its own repeated random tokens.

The residual stream (H = 96) is split into three 32-dim slots, one dim per token id (vocab 32):
  TOKEN  which token sits here                      written by the embedding
  PREV   which token sat one position before        written by layer 0's head (the previous-token head)
  NEXT   which token the model predicts comes next  written by layer 1's head (the induction head), read by lm_head
The MLPs are all zeros (mlp.out = 0), so only the two heads move information.
"""
from __future__ import annotations

import math

import pytest
import torch

from ops.engine.config import ModelConfig
from ops.engine.model import Model
from ops.lab import atlas
from ops.models.checkpoints import expected_shapes

V, H, HD = 32, 96, 64
TOKEN, PREV, NEXT = slice(0, 32), slice(32, 64), slice(64, 96)
N, SEED = 12, 5                 # atlas.induction_ids(32, seed=5, n=12): 12 distinct tokens, then the same 12 again
CONFIG = ModelConfig(model_type="qwen2", name="hand-built previous-token + induction heads", vocab_size=V,
                     hidden_size=H, intermediate_size=4, num_hidden_layers=2, num_attention_heads=1,
                     num_key_value_heads=1, head_dim_=HD, rope_theta=1_000_000.0, tie_word_embeddings=False)


def hand_built_weights(prev_amp: float = 10.0, match: float = 2.0) -> dict[str, torch.Tensor]:
    """Every weight under its Hugging Face name; all zero except what each block below sets."""
    W = {name: torch.zeros(shape) for name, shape in expected_shapes(CONFIG).items()}
    eye = torch.eye(32)
    half = HD // 2                                           # RoPE pair j is head dims (j, j + hd/2) (rotate_half)
    theta = CONFIG.rope_theta ** (-torch.arange(half, dtype=torch.float64) / half)   # pair j turns theta_j per position

    # Norms: gamma = 1, so RMSNorm only rescales each position to rms 1 and keeps the slots' geometry.
    for name in W:
        if name.endswith("norm.weight"):
            W[name] = torch.ones(H)

    # Embedding: token v -> sqrt(H) * e_v in the TOKEN slot. Every row has the same norm and rms 1, so
    # layer 0's RMSNorm passes it through unchanged.
    W["model.embed_tokens.weight"][:, TOKEN] = math.sqrt(H) * eye

    # Layer 0, the previous-token head. W_q = W_k = 0, so q and k are their biases: the same vector at every
    # position until RoPE turns them, q_m = R_m a and k_n = R_n b. With b = R_1 a (a turned on one position)
    # q_m . k_n = a . R_(n+1-m) a = sum_j amp^2 cos((m-n-1) theta_j): largest at m - n = 1 in every pair.
    # Pairs 0..7 (theta_j = 1 ... 0.05 rad) mix fast and slow turns, so no other distance 0..2n comes close;
    # amp = 10: score 100 at distance 1, 89.8 at 0 and 2, <= 66 beyond (measured, after / sqrt(hd)), so
    # softmax puts 0.99993 of each row on the previous token.
    p = "model.layers.0.self_attn."
    for j in range(8):
        W[p + "q_proj.bias"][j] = prev_amp                                           # a_j = amp * (1, 0)
        W[p + "k_proj.bias"][j] = prev_amp * math.cos(theta[j])                      # b_j = amp * (cos, sin)
        W[p + "k_proj.bias"][j + half] = prev_amp * math.sin(theta[j])
    # Its value copies the attended token's identity (TOKEN slot) and o_proj writes it into the PREV slot.
    W[p + "v_proj.weight"][:32, TOKEN] = eye
    W[p + "o_proj.weight"][PREV, :32] = eye

    # Layer 1, the induction head (K-composition with layer 0). Its input is sqrt(H/2) (e_token + e_prev) after
    # RMSNorm. The query reads the current token; the key reads the PREV slot minus the TOKEN slot, so key n
    # matches query m when token(n-1) == token(m): the position just after the current token's earlier
    # occurrence. The minus keeps position 0 out (nothing precedes it, so layer 0 copied its own token into PREV
    # there, and PREV - TOKEN = 0) and makes a query avoid its own token. The match lives in the slowest RoPE
    # pairs j = 16..31 (theta_j <= 1e-3 rad: < 0.03 rad over the 24 test positions), so position barely
    # changes it; one match scores match^2 * (H/2) / sqrt(hd) = 24, a non-match 0 or -24.
    p = "model.layers.1.self_attn."
    slow = list(range(16, 32)) + list(range(16 + half, 32 + half))                  # head dims of pairs 16..31
    for i, d in enumerate(slow):
        W[p + "q_proj.weight"][d, i] = match                                          # q: the current token
        W[p + "k_proj.weight"][d, 32 + i] = match                                     # k: the previous token ...
        W[p + "k_proj.weight"][d, i] = -match                                         # ... minus this one
    # Its value copies the attended token (the one that followed last time) into the NEXT slot, at the
    # embedding's size, and lm_head reads NEXT: the model predicts that the repeated sequence goes on repeating.
    W[p + "v_proj.weight"][:32, TOKEN] = math.sqrt(2) * eye
    W[p + "o_proj.weight"][NEXT, :32] = eye
    W["lm_head.weight"][:, NEXT] = eye
    return W


def model_of(W: dict[str, torch.Tensor]) -> Model:
    return Model(CONFIG, W, tokenizer=None, device="cpu", dtype="float32")


def test_test_sequence_has_no_repeat_in_its_first_half():
    """The construction assumes each token occurs once per copy (else the induction head splits its match)."""
    ids = atlas.induction_ids(V, SEED, N)
    assert len(ids) == 2 * N and ids[:N] == ids[N:] and len(set(ids[:N])) == N


def test_previous_token_scores_depend_only_on_distance_and_peak_at_one():
    """Layer 0's q and k are biases turned by RoPE, so its pre-softmax score depends on m - n alone."""
    trace = model_of(hand_built_weights()).trace_ids([atlas.induction_ids(V, SEED, N)], capture=["layers.0.attn.scores"])
    S = trace.attention_scores(0)[0, 0].double()                                    # (2n, 2n), -inf above diagonal
    by_d = [torch.diagonal(S, -d) for d in range(2 * N)]                            # scores at distance d = m - n
    for d, s in enumerate(by_d):
        # float32 cos/sin at positions up to 23: measured spread 2.3e-5
        assert float(s.max() - s.min()) < 1e-4, f"distance {d}: scores vary by {float(s.max() - s.min())}"
    peak = [float(s[0]) for s in by_d]
    margin = peak[1] - max(peak[:1] + peak[2:])
    assert margin > 8, f"distance 1 leads by only {margin:.2f} (measured 10.18)"


def test_atlas_labels_the_hand_built_heads():
    model = model_of(hand_built_weights())
    scores = atlas.head_scores(model, seed=SEED, n=N)
    labels, best = atlas.label_heads(scores)
    assert labels == [["previous"], ["induction"]], {k: v.tolist() for k, v in scores.items()}
    # measured: previous[0] = 0.99993, induction[1] = 1.00000; layer 0's induction 0.0, layer 1's previous 0.131
    # and broad 0.385 (its even spread over the first copy, where nothing matches yet)
    assert float(scores["previous"][0, 0]) >= 0.9 and float(scores["induction"][1, 0]) >= 0.9
    assert float(scores["induction"][0, 0]) < 0.1 and float(scores["previous"][1, 0]) < 0.3
    # and the model does what an induction head is for: in the second copy it predicts the token that followed
    ids = atlas.induction_ids(V, SEED, N)
    logits = model.trace_ids([ids], capture=["logits"]).logits[0]                   # (2n, V)
    assert logits[N:2 * N - 1].argmax(-1).tolist() == ids[N + 1:]


def _zero_layer0_o_proj(W):
    W["model.layers.0.self_attn.o_proj.weight"].zero_()          # layer 0 no longer writes the PREV slot


def _unturned_layer0_key(W):                     # layer 0 becomes a self head: PREV holds each position's own token
    W["model.layers.0.self_attn.k_proj.bias"][:] = W["model.layers.0.self_attn.q_proj.bias"]   # b = a: peaks at d = 0


@pytest.mark.parametrize("breakage", [_zero_layer0_o_proj, _unturned_layer0_key])
def test_induction_needs_the_previous_token_head(breakage):
    """Break layer 0 and the induction head loses the previous-token information its key reads."""
    W = hand_built_weights()
    breakage(W)
    scores = atlas.head_scores(model_of(W), seed=SEED, n=N)
    ind = float(scores["induction"][1, 0])
    assert ind < 0.3, f"induction score {ind:.3f} with layer 0 broken (measured 0.065 and 0.057)"
    assert atlas.label_heads(scores)[0][1] != ["induction"]
