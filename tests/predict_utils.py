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
    model = tf.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", torch_dtype=torch.float32)
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
