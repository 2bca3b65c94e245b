"""The Sampling page's candidates always hold the drawn token: the fresh-eyes walk found a title saying "red = the
chosen ' light'" over ten bars with no red one, the draw having fallen outside the ten largest logits."""
import pytest

from ops.engine.sampling import SamplingParams, make_generator, sample_stages
from ops.lab import stage_data


@pytest.fixture(scope="module")
def tiny_model(tiny_hf_folder):
    from ops import load_model

    return load_model(str(tiny_hf_folder("qwen2")), device="cpu")


def test_the_drawn_token_is_among_the_candidates_even_outside_the_top_n(tiny_model):
    trace = tiny_model.trace(["the cat sat on the"])
    n = trace.lengths[0]
    logits = trace.logits[0, n - 1].float()
    order = logits.argsort(descending=True).tolist()
    for seed in range(200):                      # a flat draw (T = 5) that lands outside the top 3: found by search
        params = SamplingParams(temperature=5.0, seed=seed)
        chosen = int(sample_stages(logits, trace.token_ids[0, :n].tolist(), params, make_generator(seed))["chosen"])
        if chosen not in order[:3]:
            break
    else:
        raise AssertionError("no seed in 200 drew outside the top 3 at T = 5")
    cand = stage_data.sampling_view(trace, 0, params, 3)["cand"].tolist()
    assert cand == order[:2] + [chosen], (cand, order[:3], chosen)
    greedy = stage_data.sampling_view(trace, 0, SamplingParams(), 3)["cand"].tolist()
    assert greedy == order[:3]                   # a draw inside the top N changes nothing
