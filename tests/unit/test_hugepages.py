"""ops/fast/hugepages.py: the int8 set's copies in 2 MiB pages hold the same values, share what was shared, leave the
model's own tensors alone, and (where the kernel gives huge pages) do lie in huge pages."""
from __future__ import annotations

import pytest
import torch

from ops.engine.config import ModelConfig
from ops.engine.model import Model
from ops.fast import hugepages, quant
from ops.models.checkpoints import expected_shapes

THP = hugepages.available()


def tiny() -> Model:
    c = ModelConfig(model_type="qwen2", vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    g = torch.Generator().manual_seed(0)
    W = {n: torch.ones(s) if "norm" in n else torch.randn(s, generator=g) for n, s in expected_shapes(c).items()}
    return Model(c, W, tokenizer=None, device="cpu", dtype="float32")


def in_arena(t: torch.Tensor) -> bool:
    """An arena's tensor is a view of a larger mapping; a plain copy owns exactly its own bytes."""
    return t.untyped_storage().nbytes() > t.numel() * t.element_size()


def test_arena_copies_hold_the_values_and_never_overlap():
    arena = hugepages.Arena()
    g = torch.Generator().manual_seed(0)
    src = [torch.randn(37, 19, generator=g), torch.randint(-128, 128, (5, 64), dtype=torch.int8, generator=g),
           torch.empty(0), torch.randn(3, generator=g).bfloat16(), torch.randn(hugepages.CHUNK // 16 + 1, generator=g)]
    out = [arena.copy(t) for t in src]
    for t, c in zip(src, out):
        assert c.dtype == t.dtype and c.shape == t.shape and c.is_contiguous() and torch.equal(c, t)
        assert c.data_ptr() % 64 == 0
    spans = sorted((c.data_ptr(), c.data_ptr() + max(1, c.numel() * c.element_size())) for c in out)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans      # the empty tensor too has its own address
    assert arena.copy(src[0], torch.bfloat16).dtype == torch.bfloat16
    if THP:
        assert all(in_arena(c) for c in out if c.numel())
        big = out[-1]                                                    # over a quarter of a chunk: its own mapping
        assert big.untyped_storage().nbytes() < hugepages.CHUNK and big.data_ptr() % hugepages.HUGE == 0


def test_settle_keeps_the_models_tensors_and_what_was_shared():
    a, b, own = torch.randn(8, 8), torch.randn(4), torch.randn(16)
    out = hugepages.settle({"a": a, "tied": a, "b": b, "own": own}, keep={own.data_ptr()})
    assert out["own"] is own
    assert out["a"].data_ptr() == out["tied"].data_ptr() and torch.equal(out["a"], a) and torch.equal(out["b"], b)
    assert (out["a"].data_ptr() != a.data_ptr()) == THP


def test_turned_off_gives_plain_tensors(monkeypatch):
    monkeypatch.setattr(hugepages, "available", lambda: False)
    assert not hugepages.available()
    c = hugepages.Arena().copy(torch.randn(1000))
    assert not in_arena(c)


@pytest.mark.skipif(not THP, reason=f"no transparent huge pages to ask for here (THP mode {hugepages.mode()!r})")
def test_int8_set_lies_in_huge_pages_and_computes_the_same():
    """Huge pages move bytes, not values: the int8 set gives the same logits as plain copies (bitwise), its
    projections lie in 2 MiB pages, and the model's own tensors it shares stay the model's."""
    model = tiny()
    ids, pos, valid = torch.tensor([[1, 2, 3, 4, 5]]), torch.arange(5)[None], torch.ones(1, 5, dtype=torch.bool)
    got = model.forward(ids, pos, valid, weights="int8", attention="sdpa")
    int8 = model.weight_set("int8")
    for name in ("model.layers.1.mlp.gate_up_proj.weight", "lm_head.weight", "lm_head.scales"):
        assert in_arena(int8[name]) and hugepages.share(int8[name]) >= 0.99, (name, hugepages.share(int8[name]))
    assert int8["model.norm.weight"].data_ptr() == model.weights["model.norm.weight"].data_ptr()
    plain = Model(model.config, dict(model.weights), tokenizer=None, device="cpu", dtype="float32")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hugepages, "available", lambda: False)
        want = plain.forward(ids, pos, valid, weights="int8", attention="sdpa")
        assert not in_arena(plain.weight_set("int8")["model.layers.1.mlp.gate_up_proj.weight"])
    assert torch.equal(got, want)
    assert quant.decode_bytes(int8) == quant.decode_bytes(plain.weight_set("int8"))


def test_a_mapping_refused_gives_plain_tensors(monkeypatch):
    """mmap or madvise saying no (no room, an old kernel) costs the huge pages, never the copy."""
    import mmap

    def refuse(*a, **k):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", refuse)
    t = torch.randn(300, 7)
    arena = hugepages.Arena()
    small, big = arena.copy(t), arena.copy(torch.randn(hugepages.CHUNK // 8))
    assert torch.equal(small, t) and not in_arena(small) and not in_arena(big)
