"""int8 weight-only decoding (ops/fast/quant.py) through the one forward pass, the fast= choice, the precision report."""
from __future__ import annotations

import threading

import pytest
import torch
from conftest import TINY

from ops.engine import model as model_module
from ops.engine.config import ModelConfig
from ops.engine.decode import decode_path
from ops.engine.model import Model
from ops.errors import InputError
from ops.fast import native, quant
from ops.lab.precision import precision_report
from ops.models.checkpoints import expected_shapes
from ops.models.tiny import tiny_moe_model


def tiny_dense(seed: int = 0) -> Model:
    c = ModelConfig(model_type="qwen2", **dict(TINY, vocab_size=512), max_position_embeddings=512)
    g = torch.Generator().manual_seed(seed)
    W = {n: torch.ones(s) if "norm" in n else torch.randn(s, generator=g) / s[-1] ** 0.5
         for n, s in expected_shapes(c).items()}
    return Model(c, W, tokenizer=None, device="cpu", dtype="float32")


def logits(model, ids, weights="model", attention="eager"):
    S = ids.shape[1]
    return model.forward(ids, torch.arange(S)[None], torch.ones(1, S, dtype=torch.bool), weights=weights,
                         attention=attention)[0].float()


# ---- the scheme -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.bfloat16])
def test_quantize_round_trip_within_half_a_step(scale_dtype):
    """|W - s q| <= s / 2 per element (round to nearest; the row's max lands on 127.5 and clamps: still s/2)."""
    g = torch.Generator().manual_seed(0)
    W = torch.randn(300, 96, generator=g) * torch.logspace(-3, 1, 300)[:, None]       # rows of very different size
    W[7] = 0.0                                                                            # an all-zero row
    q, s = quant.quantize(W, scale_dtype)
    assert q.dtype == torch.int8 and q.shape == W.shape and s.shape == (300,) and s.dtype == scale_dtype
    err = (quant.dequantize(q, s) - W).abs()
    bound = s.float()[:, None] / 2 * (1 + 1e-4)      # float32 rounding of W / s
    assert bool((err <= bound).all()), f"max err / bound = {(err / bound).max().item():.4f}"
    assert float(err[7].max()) == 0.0
    assert int(q.max()) <= 127 and int(q.min()) >= -128
    rel = (quant.dequantize(q, s) - W).norm(dim=1) / W.norm(dim=1).clamp_min(1e-30)
    assert float(rel.max()) < 0.01, f"relative row error {rel.max().item():.4f}"


def test_quantize_in_blocks_and_parts_is_quantize_of_the_whole():
    """Rows go `block` at a time, and a list of parts (q|k|v) is quantized as if concatenated: bitwise the same q
    and s as one pass over torch.cat(parts) (each row is quantized on its own)."""
    g = torch.Generator().manual_seed(1)
    parts = [torch.randn(n, 64, generator=g) * torch.logspace(-2, 1, n)[:, None] for n in (37, 5, 20)]
    q, s = quant.quantize(torch.cat(parts), torch.bfloat16, block=10_000)
    for block in (1, 3, 16):
        qb, sb = quant.quantize(parts, torch.bfloat16, block=block)
        assert torch.equal(qb, q) and torch.equal(sb, s), block
    rows = torch.cat(parts)
    by_hand = torch.round(rows / s.float()[:, None]).clamp(-128, 127).to(torch.int8)      # the scheme, in one line
    assert torch.equal(q, by_hand)


@pytest.mark.parametrize("kernel", list(quant.KERNELS))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("M", [1, 5, 40])            # odd M: the native kernel's two-row tile leaves one row over
def test_kernels_agree_with_dequantized_product(kernel, M, dtype):
    g = torch.Generator().manual_seed(1)
    W = torch.randn(200, 64, generator=g) / 8
    q, s = quant.quantize(W, dtype)
    x = torch.randn(1, M, 64, generator=g).to(dtype)
    want = x.float() @ quant.dequantize(q, s).T                                           # (1, M, 200)
    if kernel in quant.LAYOUTS and native.load() is None:
        pytest.skip(f"the {kernel} kernel cannot be built here: {native.why_not()}")
    p = quant.pack(kernel, q)
    assert torch.equal(quant.unpack(kernel, p), q)
    got = quant.KERNELS[kernel](x, p, s)
    assert got.shape == (1, M, 200) and got.dtype == dtype
    got = got.float()
    assert torch.allclose(got, want, rtol=2e-2, atol=2e-2), f"max |diff| {(got - want).abs().max().item():.4f}"


# ---- the weight set through the one forward pass ---------------------------------------------------------
def test_native_kernel_builds_on_an_avx2_machine_with_a_compiler(monkeypatch):
    """The C kernel (ops/fast/native/int8_linear.c) builds and passes its own check where there is a C compiler and
    an x86-64 CPU with AVX2 and FMA; it agrees with a float64 product on the model's own shapes (odd K and a
    several-row prefill too);
    where it was not built (or could not be), the CPU falls back to ATen's int8pack_mm."""
    import shutil
    model, flags = native._cpu()
    if not (shutil.which("cc") or shutil.which("gcc")) or not {"avx2", "fma"} <= flags:
        pytest.skip("no C compiler or no AVX2/FMA here: the native kernel cannot be built")
    assert native.load() is not None, native.why_not()
    assert quant.pick_kernel("cpu", torch.bfloat16) == "native"
    g = torch.Generator().manual_seed(2)
    # N % 8 rows past the last block of 8, K % 8 tail columns, M = 5: two 2-row tiles and one row
    for N, K, M in ((1152, 896, 1), (899, 4867, 1), (1152, 896, 5), (13, 21, 3)):
        q = torch.randint(-128, 128, (N, K), generator=g, dtype=torch.int8)
        s, x = torch.rand(N, generator=g), torch.randn(M, K, generator=g)
        want = (x.double() @ q.double().T) * s.double()
        p = native.pack(q)
        assert torch.equal(native.unpack(p), q)
        if N >= 8:
            assert not torch.equal(p, q) and torch.equal(p[N - N % 8:], q[N - N % 8:])   # only blocks are reordered
        # float32 sums of K products of size <= 128 * 4: rounding ~ sqrt(K) * eps * |terms|, far below 1e-2
        assert torch.allclose(native.int8_linear(x, p, s).double(), want, rtol=1e-4, atol=1e-2)
    monkeypatch.setattr(native, "_state", {})
    assert native.load() is None and "not built" in native.why_not()      # load() never compiles
    assert quant.pick_kernel("cpu", torch.bfloat16) == "int8pack_mm"
    with pytest.raises(RuntimeError, match="not available"):
        native.int8_linear(torch.ones(1, 8), torch.ones(4, 8, dtype=torch.int8), torch.ones(4))



def test_native_product_same_bits_at_both_widths():
    """Where the CPU has AVX-512F, the product runs 16 lanes wide (two rows of a block per register), for one row
    of x (a decode step, two blocks at a time) and for several (a prefill, two rows of x per converted weight);
    each lane does the multiply-adds of the 8-wide AVX2 loops in the same order, so y is bitwise the same, on the
    model's shapes (the LM head's 151,936 rows included), on tails (N % 8 rows, K % 8 columns, an odd block
    count) and on M = 5 (two 2-row tiles and one row; with AVX-512 a 4-row tile and one row), 6 and 9. isa(256)
    always gives the 8-wide loop; isa(512) gives 256 where the CPU lacks AVX-512F."""
    if native.load() is None:
        pytest.skip(f"the native kernel cannot be built here: {native.why_not()}")
    model, flags = native._cpu()
    assert native.isa(0) == (512 if "avx512f" in flags else 256)          # the default: the widest there is
    assert native.isa(256) == 256
    assert native.isa(512) == (512 if "avx512f" in flags else 256)
    if native.isa(0) != 512:
        pytest.skip("no AVX-512F on this CPU: only the 8-wide loop runs")
    g = torch.Generator().manual_seed(5)
    try:
        for N, K, M in ((1152, 896, 1), (896, 4864, 1), (151936, 896, 1), (899, 4867, 1), (13, 21, 1), (1152, 896, 5),
                        (899, 4867, 5), (13, 21, 4), (1152, 896, 9), (899, 4867, 6)):
            q = torch.randint(-128, 128, (N, K), generator=g, dtype=torch.int8)
            p, s, x = native.pack(q), torch.rand(N, generator=g) + 0.5, torch.randn(M, K, generator=g)
            native.isa(256)
            narrow = native.int8_linear(x, p, s)
            native.isa(512)
            wide = native.int8_linear(x, p, s)
            assert torch.equal(narrow, wide), (N, K, M)
            assert torch.allclose(wide.double(), (x.double() @ q.double().T) * s.double(), rtol=1e-4, atol=1e-2)
    finally:
        native.isa(512)                                   # the default: the widest the CPU has

@pytest.mark.parametrize("make", [tiny_dense, tiny_moe_model], ids=["dense", "moe"])
def test_int8_forward_close_to_float32(make):
    model = make()
    ids = torch.tensor([[1, 2, 3, 4, 5, 6, 7]])
    l32 = logits(model, ids)
    for attention in ("eager", "sdpa"):
        l8 = logits(model, ids, "int8", attention)
        rel = ((l8 - l32).norm() / l32.norm()).item()       # random weights: about 2-3%, bf16 alone about 1%
        assert rel < 0.06, f"int8 vs float32 logits: relative error {rel:.4f}"
    W = model.weight_set("int8")
    rest = torch.bfloat16 if model.config.num_experts else torch.float32       # experts are not quantized: 16 bits
    assert isinstance(W, quant.Int8Weights) and W.weight_dtype == "int8" and W.dtype == rest == quant.rest_dtype(model)
    assert W["lm_head.weight"].dtype == torch.int8 and W["lm_head.scales"].shape == (model.config.vocab_size,)
    assert W["lm_head.scales"].dtype == rest                                        # the kernel reads them as they are
    # in the kernel's layout, rows() gives back the weights it multiplies by: within half a step of float32's
    for name, parts in (("lm_head", ["lm_head"]), ("model.layers.0.self_attn.qkv_proj",
                                                   [f"model.layers.0.self_attn.{x}_proj" for x in "qkv"])):
        q, s = W.rows(name)
        want = torch.cat([model.weights[p + ".weight"] for p in parts])
        assert torch.equal(W[name + ".weight"], quant.pack(W.kernel, q))
        err = (quant.dequantize(q, s) - want).abs()
        assert bool((err <= s.float()[:, None] / 2 * (1 + 1e-4)).all()), name
    emb, own = W["model.embed_tokens.weight"], model.weights["model.embed_tokens.weight"]
    assert (emb.data_ptr() == own.data_ptr()) == (rest == torch.float32)   # a dense model's own table, not a copy


@pytest.mark.parametrize("make", [tiny_dense, tiny_moe_model], ids=["dense", "moe"])
def test_bytes_per_token_from_shapes_equal_the_built_sets(make):
    model = make()
    est = quant.path_bytes(model)
    assert est == {"eager": quant.decode_bytes(model.weight_set("model")),
                   "bf16": quant.decode_bytes(model.weight_set("bf16")),
                   "int8": quant.decode_bytes(model.weight_set("int8"))}
    assert est["int8"] < est["bf16"] < est["eager"]


def test_weight_set_int8_built_once_under_concurrency(monkeypatch):
    """Two threads asking at once get the same object; the builder runs once."""
    model, calls, go = tiny_dense(), [], threading.Barrier(2)
    real = quant.int8_copy

    def slow_copy(m, *a, **k):
        calls.append(1)
        threading.Event().wait(0.2)                         # the second thread arrives while this one builds
        return real(m, *a, **k)

    monkeypatch.setattr(model_module, "int8_copy", slow_copy)
    got = []

    def ask():
        go.wait()
        got.append(model.weight_set("int8"))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1 and got[0] is got[1]
    assert model.weight_set("int8") is got[0]
    assert model.weight_set("bf16") is not got[0]


# ---- fast= ------------------------------------------------------------------------------------------------
def test_decode_path_values():
    assert decode_path(None) == decode_path(False) == "eager"
    assert decode_path(True) == decode_path("bf16") == "bf16"
    assert decode_path("int8") == "int8"
    for bad in ("int9", "int4", "fp8", "float32", 1, "BF16"):
        with pytest.raises(InputError, match="not a decoding path"):
            decode_path(bad)
    with pytest.raises(InputError, match="'int8'"):
        tiny_dense().weight_set("int9")


# ---- the precision report ---------------------------------------------------------------------------------
def test_precision_report_keys_and_shapes(monkeypatch):
    model = tiny_dense()
    monkeypatch.setattr(model, "encode_prompts", lambda p, chat=False: ([p], [p], [[1, 2, 3, 4, 5, 6]]))
    rep = precision_report(model, "x")
    assert set(rep) == {"resid_rel_err", "top1_agree", "top5_agree", "kl", "weight_bytes"}
    dtypes = ["float32", "bfloat16", "int8"]
    L = model.config.num_hidden_layers
    for k in rep:
        assert list(rep[k]) == dtypes, k
    for d in dtypes:
        assert rep["resid_rel_err"][d].shape == (L + 1,)
        assert 0.0 <= rep["top1_agree"][d] <= 1.0 and 0.0 <= rep["top5_agree"][d] <= 1.0 and rep["kl"][d] >= 0.0
    assert float(rep["resid_rel_err"]["float32"].abs().max()) == 0.0 and rep["kl"]["float32"] == 0.0
    assert rep["top1_agree"]["float32"] == rep["top5_agree"]["float32"] == 1.0
    assert 0 < float(rep["resid_rel_err"]["bfloat16"][0]) <= 2 ** -8                    # embedding: one rounding
    assert float(rep["resid_rel_err"]["int8"][-1]) < 0.1
    b = rep["weight_bytes"]
    assert b["int8"] < b["bfloat16"] < b["float32"]


# ---- the real model ---------------------------------------------------------------------------------------
@pytest.mark.real
def test_int8_generate_real(real_model):
    """int8 decoding runs, says what ran, and picks float32's first greedy token; the KL of the first
    next-token distribution is small."""
    prompt = "The capital of France is"
    g32 = real_model.generate(prompt, chat=False, max_new_tokens=1)
    g8 = real_model.generate(prompt, chat=False, max_new_tokens=4, fast="int8", stop_at_eos=False)
    assert (g8.path, g8.weight_dtype, g8.compute_dtype, g8.fast) == ("int8", "int8", "float32", True)
    assert g8.token_ids[0] == g32.token_ids[0], f"{g8.text!r} vs {g32.text!r}"
    assert len(g8.token_ids) == 4 and g8.steps[-1].kv_bytes > 0
    ids = torch.tensor([real_model.encode_prompts(prompt)[2][0]])
    p32 = torch.log_softmax(logits(real_model, ids)[-1], -1)
    p8 = torch.log_softmax(logits(real_model, ids, "int8", "sdpa")[-1], -1)
    kl = float((p32.exp() * (p32 - p8)).sum())
    assert kl < 0.05, f"KL(p32 || p_int8) = {kl:.4f}"
    b = quant.path_bytes(real_model)
    assert b["int8"] < 0.6 * b["bf16"], b
    with pytest.raises(InputError, match="int9"):
        real_model.generate(prompt, max_new_tokens=1, fast="int9")
