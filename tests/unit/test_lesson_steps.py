"""The shipped lessons say what their pages show, and never the answer to their own questions (issue 47, point 3).

Each step's notes are checked against the live data of the page it opens, for the lesson's own prompt on the bundled
model (the notes name it where they quote its shapes): the token the residual chart singles out, the rows of the
embedding table, the causal mask, the top next token... (`-m real`, one model load for the file). Without the model:
no note or question states its step's answer, and the chooser opens on the first lesson.
"""
from __future__ import annotations

import re

import pytest
import torch

from classroom import lessons


def _lesson(name: str) -> lessons.Lesson:
    return lessons.load(lessons.shipped()[name])


def _step(name: str, page: str, k: int | None = None) -> lessons.Step:
    steps = [s for s in _lesson(name).steps if s.page == page]
    return steps[0] if k is None else _lesson(name).steps[k]


def _says(text: str, words: str) -> bool:
    """words as a whole phrase in text (so the answer "no" is not found inside "not")."""
    return re.search(r"(?<![\w⁻])" + re.escape(words) + r"(?![\w⁻])", text) is not None


def test_the_chooser_opens_on_the_first_lesson():
    """shipped() is in course order: the Tour's lesson chooser (index 0) starts on first-lesson, then the others."""
    names = list(lessons.shipped())
    assert names[:3] == ["first-lesson", "attention-deep-dive", "serving-interview"], names
    assert sorted(names) == sorted(p.stem for p in lessons.LESSONS.glob("*.json"))


@pytest.mark.parametrize("name", ["first-lesson", "attention-deep-dive", "serving-interview"])
def test_no_note_or_question_gives_its_answer_away(name):
    """The room votes on the question while the notes are on screen: neither the notes, nor the question itself, nor
    the pickers the bar names contain the answer, in either language (the bar's folded Answer is its only place)."""
    for k, step in enumerate(_lesson(name).steps):
        if step.question is None:
            continue
        for lang in ("zh", "en"):
            answer = step.question.answer_in(lang)
            assert not _says(step.notes[lang], answer), (name, k, lang, answer)
            assert not _says(step.question.text(lang), answer), (name, k, lang, answer)
            # the bar names the step's pickers ("layer 12, head 10"): no picker may read as the answer (head 7 did)
            assert answer not in {str(v) for v in step.pickers.values()}, (name, k, step.pickers, answer)


# ---- the notes against the live page data, on the bundled model --------------------------------------------------
@pytest.fixture(scope="module")
def traces(real_model):
    """The lessons' prompts traced once on the bundled model (what each step's page reads)."""
    return {name: real_model.trace(list(_lesson(name).prompts)) for name in lessons.shipped()}


def _pieces(model, trace) -> list[str]:
    return model.tokenizer.pieces(trace.token_ids[0, :trace.lengths[0]].tolist())


def _top1(model, trace) -> str:
    """The LM head page's longest bar for the last position (stage_data.next_token_top, as the page calls it)."""
    from ops.lab import stage_data

    n = trace.lengths[0]
    top = stage_data.next_token_top(trace, 0, n - 1, 10)
    return model.tokenizer.pieces(top["ids"][:1].tolist())[0]


@pytest.mark.real
def test_first_lesson_tokenize(real_model, traces):
    """Step 1: the chips hold “␣France”; “France” without its space is another id, and it is not on the page (the
    prompt's ids do not hold it), so the screen does not answer the question."""
    tok, tr = real_model.tokenizer, traces["first-lesson"]
    pieces = _pieces(real_model, tr)
    assert " France" in pieces and "France" not in pieces
    spaced = tr.token_ids[0, pieces.index(" France")].item()
    bare = tok.encode("France")
    assert len(bare) == 1 and bare[0] != spaced and bare[0] not in tr.token_ids[0].tolist()
    assert _step("first-lesson", "tokenize").question.answer_in("en") == "a different id"


@pytest.mark.real
def test_first_lesson_embedding(real_model, traces):
    """Step 2: the table's 151,936 rows of 896 numbers are the bundled config's; the same token at two positions
    gets the same vector (the answer), compared on a sentence with “␣the” twice against the embedding matrix."""
    c = real_model.config
    notes = _step("first-lesson", "embedding").notes
    assert f"{c.vocab_size:,} rows of {c.hidden_size} numbers" in notes["en"]
    assert f"{c.vocab_size:,} 行、每行 {c.hidden_size} 个数" in notes["zh"]
    tr = real_model.trace(["the cat saw the dog and the bird"])
    ids = tr.token_ids[0].tolist()
    the = [k for k, i in enumerate(ids) if i == ids[ids.index(tok_id := real_model.tokenizer.encode(" the")[0])]]
    assert len(the) >= 2 and tok_id in ids
    assert torch.equal(tr.embeddings[0, the[0]], tr.embeddings[0, the[1]])          # exactly the same row
    assert not torch.equal(tr.embeddings[0, 0], tr.embeddings[0, the[0]])
    assert _step("first-lesson", "embedding").question.answer_in("en") == "yes, the same"


@pytest.mark.real
def test_first_lesson_rmsnorm(real_model, traces):
    """Step 3: y = γ · x / RMS(x) for every token of layer 0 (torch's own rms_norm as the reference; float32 on the
    CPU agreed to 1e-6 relative in repeated runs, 1e-5 leaves room for another CPU), and the notes say γ like the
    page ("y after = γ · x / RMS"), not g."""
    from ops.lab import checks

    x, y, gamma, _, _ = checks.norm_io(real_model, traces["first-lesson"], "attn_norm", 0)
    ref = torch.nn.functional.rms_norm(x.float(), (x.shape[-1],), gamma.float(), real_model.config.rms_norm_eps)
    assert torch.allclose(y.float(), ref, rtol=1e-5, atol=1e-6)
    unit = (x.float() / x.float().pow(2).mean(-1, keepdim=True).add(real_model.config.rms_norm_eps).sqrt())
    # one size: RMS 1 less what ε takes (ε = 1e-6 beside mean(x²) ≈ 2e-4 at layer 0: 0.25% measured), so 1%
    assert torch.allclose(unit.pow(2).mean(-1).sqrt(), torch.ones(unit.shape[:-1]), atol=1e-2)
    notes = _step("first-lesson", "rmsnorm").notes
    assert "γ" in notes["en"] and "γ" in notes["zh"] and " g," not in notes["en"]


@pytest.mark.real
def test_first_lesson_attention(real_model, traces):
    """Step 4 (layer 0, head 0, as its pickers say): each row's probabilities add up to 1, no token puts any weight
    on a later one, and the last token's largest weight is on the position the answer names (token 0, 0.312 against
    0.287 on token 2 in one run: far wider than any CPU's float32 spread). The page's heading says a position looks
    back, so the question is not whether it can look ahead (the fresh-eyes walk)."""
    step = _step("first-lesson", "attention")
    tr = traces["first-lesson"]
    n = tr.lengths[0]
    p = tr.attention_probs(step.pickers["layer"])[0, step.pickers["head"], :n, :n].float()
    later = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    assert torch.nan_to_num(p[later], nan=0.0).abs().max() == 0
    assert torch.allclose(torch.nan_to_num(p, nan=0.0).sum(-1), torch.ones(n), atol=1e-5)
    top = int(p[n - 1].argmax())
    assert step.question.answer_in("en") == f"token {top} (“{real_model.tokenizer.decode([int(tr.token_ids[0, top])]).strip()}”)"


@pytest.mark.real
def test_first_lesson_mlp(real_model, traces):
    """Step 5: up to intermediate_size (4,864) and back to hidden_size (896) in the bundled config; each token's MLP
    output is made from its own row alone (checks.mlp recomputes it from that row with F.silu / F.linear)."""
    from ops.lab import checks

    c, tr = real_model.config, traces["first-lesson"]
    notes = _step("first-lesson", "mlp").notes
    assert f"{c.intermediate_size:,}" in notes["en"] and f"{c.hidden_size}" in notes["en"]
    for s in range(tr.lengths[0]):
        assert all(r.ok for r in checks.mlp(real_model, tr, 0, 0, s)), s


@pytest.mark.real
def test_first_lesson_residual(real_model, traces):
    """Step 6: the chart draws every token's stream through the 24 layers, token 0 thick; the notes say so (not
    "the last token"), and token 0 does grow far larger than the others on this prompt (over 5x each other
    token's largest norm; measured: about 10x)."""
    from ops.lab import stage_data

    c, tr = real_model.config, traces["first-lesson"]
    notes = _step("first-lesson", "residual").notes
    assert "last token" not in notes["en"] and "最后一个" not in notes["zh"]
    assert "token 0" in notes["en"] and "第 0 个 token" in notes["zh"] and "thick" in notes["en"]
    assert f"{c.num_hidden_layers} layers" in notes["en"] and f"{c.num_hidden_layers} 层" in notes["zh"]
    norms = stage_data.stream_norms(tr, 0)                                   # (L + 1, n), the page's call
    assert norms.shape == (c.num_hidden_layers + 1, tr.lengths[0])
    assert norms[:, 0].max() > 5 * norms[:, 1:].max()


@pytest.mark.real
@pytest.mark.parametrize("name", ["first-lesson", "attention-deep-dive"])
def test_the_next_token_votes(real_model, traces, name):
    """The LM head steps ask for the model's top next token: the answer is the longest bar's token (without its
    leading space), on the lesson's prompt; the other options are not it."""
    q = _step(name, "lm_head").question
    top = _top1(real_model, traces[name])
    assert top.strip() == q.answer_in("en") == q.answer_in("zh"), top
    assert [o for o in q.options_in("en") if o == top.strip()] == [q.answer_in("en")]


@pytest.mark.real
def test_deep_dive_rope_and_gqa(real_model, traces):
    """Steps 1-2: θ = 1,000,000 and 14 query heads are the bundled config's; 14 / 2 = 7 query heads per KV head
    is the answer (the notes give neither the 2 nor the 7); RoPE turns q and k (the trace holds q_rope and
    k_rope, v as projected: attention's context is probs · v)."""
    c, tr = real_model.config, traces["attention-deep-dive"]
    rope, gqa = _lesson("attention-deep-dive").steps[:2]
    assert f"θ = {c.rope_theta:,.0f}" in rope.notes["en"] and rope.question.answer_in("en") == "q and k"
    assert f"{c.num_attention_heads} query heads" in gqa.notes["en"]
    assert gqa.question.answer_in("en") == str(c.num_attention_heads // c.num_key_value_heads) == "7"
    assert not _says(gqa.notes["en"], str(c.num_key_value_heads))
    assert "layers.0.attn.q_rope" in tr and "layers.0.attn.k_rope" in tr and "layers.0.attn.v_rope" not in tr


@pytest.mark.real
def test_deep_dive_atlas_scores_are_0_to_1(real_model):
    """Step 3: every head's induction score, computed by the model on a repeated random run, lies in 0..1."""
    from ops.lab import atlas

    s = atlas.head_scores(real_model, n=16)["induction"]
    assert s.shape == (real_model.config.num_hidden_layers, real_model.config.num_attention_heads)
    assert float(s.min()) >= 0 and float(s.max()) <= 1 and float(s.max()) > 0.5     # induction heads exist


def test_serving_kv_and_bf16_answers():
    """Serving steps 2-3 (no model): 2 × 64 × 8 × 128 × 2 = 262,144 from Qwen2.5-32B's config through the one KV
    formula; bf16's spacing at 1 is 2⁻⁷ (torch.finfo), with 8 exponent bits and 8 of float32's 24 significant."""
    from ops.arith import costs

    ref = costs.reference_config()
    kv, bf16 = _lesson("serving-interview").steps[1:3]
    assert (ref.num_hidden_layers, ref.num_key_value_heads, ref.head_dim) == (64, 8, 128)
    assert f"{ref.num_hidden_layers} layers, {ref.num_key_value_heads} KV heads of dimension {ref.head_dim}" \
        in kv.notes["en"]
    assert kv.question.answer_in("en") == f"{costs.kv_bytes_per_token(ref, 2):,}"
    assert torch.finfo(torch.bfloat16).eps == 2 ** -7 and bf16.question.answer_in("en") == "2⁻⁷"
    significant = {d: 1 - int(torch.log2(torch.tensor(torch.finfo(d).eps)).item())      # 2^-(p-1) = eps
                   for d in (torch.bfloat16, torch.float32)}
    assert (significant[torch.bfloat16], significant[torch.float32]) == (8, 24)
    assert torch.finfo(torch.bfloat16).bits - significant[torch.bfloat16] == 8 == 32 - significant[torch.float32]
    assert "8 exponent bits" in bf16.notes["en"] and "only 8 of its 24 significant bits" in bf16.notes["en"]


@pytest.mark.real
def test_serving_scale_note_against_the_roofline(real_model):
    """Serving step 4: on the loaded (bundled) model's roofline the decode step is left of the ridge (memory-bound)
    and prefill to its right; Qwen2.5-32B's bf16 weights are about 65.5 GB, fit a 141 GB H200, and one read of them
    at its 4.8 TB/s takes about 13.7 ms (the H200's figures from ops.arith.costs.GPUS, the ones the page uses)."""
    from ops.arith import costs, scale_data

    notes = _lesson("serving-interview").steps[3].notes["en"]
    ref, g = costs.reference_config(), costs.GPUS["H200 141GB"]
    w = costs.weight_bytes(ref, 16)
    assert f"{w / 1e9:.1f} GB" in notes and "H200" in notes and w / 1e9 < g["mem_gb"]
    assert f"{g['tb_per_s']} TB/s" in notes and f"{w / (g['tb_per_s'] * 1e12) * 1e3:.1f} ms" in notes
    v = scale_data.view(real_model.config, 1, 9, "H200 141GB")         # the page's default B, S for this prompt
    assert v["roofline"]["decode"]["intensity"] < v["ridge"] and v["roofline"]["decode"]["bound"] == "memory"
    assert v["roofline"]["prefill"]["intensity"] > v["roofline"]["decode"]["intensity"]
