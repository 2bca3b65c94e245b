"""Helpers for the predict-first page tests (ui/predict.py): find a question's form, commit a guess, read the
verdict. A question's radio has the key "predict-choice-<page>-<name>" (gate) or "predict-choice-<page>" (first)."""
from __future__ import annotations

SWITCH = {"zh": "先猜再看", "en": "Predict first"}
COMMIT = {"zh": "确定，揭晓", "en": "Commit and reveal"}
VERDICT = ("猜对了", "Right", "你猜的是", "You guessed")


def question(at, page: str, name: str | None = None):
    """The question's radio, or None when it is not on the page."""
    key = f"predict-choice-{page}" + (f"-{name}" if name else "")
    found = [r for r in at.radio if r.key == key]
    return found[0] if found else None


def commit(at, page: str, name: str | None, lang: str, pick: int = 0) -> str:
    """Choose option `pick` of the question and press its form's button; returns the chosen label."""
    radio = question(at, page, name)
    assert radio is not None, f"no question {page}/{name}"
    label = radio.options[pick]
    radio.set_value(label)
    form = f"predict-{page}" + (f"-{name}" if name else "")
    [button] = [b for b in at.button if b.label == COMMIT[lang] and b.proto.form_id == form]
    button.click().run()
    return label


def verdicts(at) -> list[str]:
    """The predict-first verdicts on the page (success: right; warning: wrong)."""
    return [v.value for v in [*at.success, *at.warning] if v.value.startswith(VERDICT)]


def right_answer(verdict: str, guess: str, options) -> str:
    """The option a verdict names as the answer: the guess when it says right, else the one after "answer is"."""
    if verdict.startswith(("猜对了", "Right")):
        return guess
    [named] = [o for o in options if f"the answer is {o}. " in verdict or f"答案是 {o}。" in verdict]
    return named


def transformers_run(folder: str, prompt: str):
    """The independent reference: transformers' own model on the folder (eager attention), the prompt encoded by
    the tokenizers library; (outputs with hidden states and attentions, the model)."""
    import tokenizers
    import torch
    import transformers as tf

    ids = tokenizers.Tokenizer.from_file(f"{folder}/tokenizer.json").encode(prompt).ids
    model = tf.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True, output_attentions=True)
    return out, model


def lens_first_row(folder: str, prompt: str) -> str:
    """The first row ("embed", "L0", ...) whose logit lens at the last position ranks the final top-1 first:
    transformers' hidden states through its own final norm and LM head (the last row is the logits)."""
    import torch

    out, model = transformers_run(folder, prompt)
    final = int(out.logits[0, -1].argmax())
    with torch.no_grad():
        tops = [int(model.lm_head(model.model.norm(x[0, -1])).argmax()) for x in out.hidden_states[:-1]] + [final]
    r = tops.index(final)
    return "embed" if r == 0 else f"L{r - 1}"


def attention_top_key(folder: str, prompt: str, layer: int, head: int) -> int:
    """The key position the last query of layer `layer`'s head `head` weights most, from transformers."""
    out, _ = transformers_run(folder, prompt)
    return int(out.attentions[layer][0, head, -1].argmax())


def ablation_moves(folder: str, prompt: str, layer: int, head: int, monkeypatch) -> dict:
    """|Δp| of the top-1 next token at the last position under each of Experiments' ablations of `layer`, done with
    hooks on transformers' own model: head `head` zeroed at o_proj's input, the attention output zeroed, the MLP
    output zeroed, and the layer's rotary embedding skipped (q and k unrotated)."""
    import torch
    import transformers.models.qwen2.modeling_qwen2 as mq

    out, model = transformers_run(folder, prompt)
    target = int(out.logits[0, -1].argmax())
    before = float(torch.softmax(out.logits[0, -1], -1)[target])
    ids = torch.tensor([__import__("tokenizers").Tokenizer.from_file(f"{folder}/tokenizer.json").encode(prompt).ids])
    block, hd = model.model.layers[layer], model.config.hidden_size // model.config.num_attention_heads
    skip = {"on": False}
    rope = mq.apply_rotary_pos_emb
    monkeypatch.setattr(mq, "apply_rotary_pos_emb",
                        lambda q, k, *a, **kw: (q, k) if skip["on"] else rope(q, k, *a, **kw))

    def zero_head(_, args):
        x = args[0].clone()
        x[..., head * hd:(head + 1) * hd] = 0
        return (x,)

    def set_skip(on):
        def hook(*_):
            skip["on"] = on
        return hook

    hooks = {"head": [(block.self_attn.o_proj, "pre", zero_head)],
             "attn": [(block.self_attn, "post", lambda m, i, o: (torch.zeros_like(o[0]), *o[1:]))],
             "mlp": [(block.mlp, "post", lambda m, i, o: torch.zeros_like(o))],
             "norope": [(block.self_attn, "pre", set_skip(True)), (block.self_attn, "post", set_skip(False))]}
    moves = {}
    for kind, hs in hooks.items():
        handles = [m.register_forward_pre_hook(f) if when == "pre" else m.register_forward_hook(f) for m, when, f in hs]
        with torch.no_grad():
            logits = model(ids).logits
        for h in handles:
            h.remove()
        moves[kind] = abs(float(torch.softmax(logits[0, -1], -1)[target]) - before)
    return moves


def greedy_reference(folder: str, prompt: str, new_tokens: int) -> tuple[list[int], list[int], str]:
    """Greedy tokens without a KV cache, the whole text rerun each step: float32 from transformers' own model, and
    bfloat16 from our engine's bf16 weight set (Model.forward, SDPA); and the float32 text, decoded by the tokenizers
    library. The page decodes with a cache (ops.lab.interview.greedy_rows)."""
    import tokenizers
    import torch

    from ops import load_model

    tok = tokenizers.Tokenizer.from_file(f"{folder}/tokenizer.json")
    ids = tok.encode(prompt).ids
    _, hf = transformers_run(folder, prompt)
    ours = load_model(folder, "cpu", "float32")

    def greedy(logits_of):
        row = list(ids)
        for _ in range(new_tokens):
            row.append(int(logits_of(torch.tensor([row]))[0, -1].float().argmax()))
        return row[len(ids):]

    with torch.no_grad():
        f32 = greedy(lambda x: hf(x).logits)
        bf16 = greedy(lambda x: ours.forward(x, torch.arange(x.shape[1])[None], torch.ones_like(x, dtype=torch.bool),
                                             weights="bf16", attention="sdpa"))
    return f32, bf16, tok.decode(f32, skip_special_tokens=True)
