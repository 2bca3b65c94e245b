"""The practice page's live quiz: the runs behind its experiment questions (content/practice.py words them).

One MLP output zeroed at one position and the row rerun (experiments_data.ablation_reach), and the direct logit
attribution of the top next token. Kept with the trace (Trace.memo): the reruns happen once per trace."""
from __future__ import annotations

from . import experiments_attribution, experiments_data, stage_data


def experiment_runs(model, trace, b: int = 0) -> dict | None:
    """What the runs found on row b (None when the trace kept too little or a run was refused)."""
    try:
        return trace.memo(("quiz_experiments", b), lambda: _runs(model, trace, b))
    except (KeyError, RuntimeError, ValueError):
        return None


def _runs(model, trace, b: int) -> dict:
    c = model.config
    L, n = c.num_hidden_layers, trace.lengths[b]
    k, p = (L - 1) // 2, n // 2        # a layer with layers after it: their attention carries the edit onwards
    out = dict(b=b, L=L, nh=c.num_attention_heads, n=n, layer=k, position=p,
               reach=experiments_data.ablation_reach(model, trace, b, k, p), attribution=None)
    try:
        tid = int(stage_data.next_token_top(trace, b, n - 1, 1)["ids"][0])
        attr = experiments_attribution.logit_attribution(model, trace, b, -1, tid)
    except KeyError:                          # a trace that did not keep attn.context / resid_out: no such question
        return out
    out["attribution"] = dict(word=model.tokenizer.decode([tid]), logit=float(trace.logits[b, n - 1, tid]),
                              parts=len(attr), total=sum(attr.values()), bias="L0.attn.bias" in attr)
    return out
