"""A lesson's sampling step in the export (classroom/lesson_export.py) is the Sampling page's own chart on its own data:
viz.sampling.candidates_chart on ops.lab.stage_data.sampling_view at the sliders' starting settings, checked
against transformers' own logits warpers."""
from __future__ import annotations

import torch

from classroom import lessons
from ops.engine import sampling as smp


def test_the_export_draws_the_sampling_page_chart_at_the_starting_settings(tiny_app_dense):
    import transformers as tf

    from classroom import lesson_export
    from ops import load_model

    model = load_model(tiny_app_dense)
    data = {"version": 1, "title": {"zh": "采样", "en": "Sampling"}, "prompts": ["我明天要去北京参加面试，我觉得"],
            "steps": [{"page": "sampling", "notes": {"zh": "看", "en": "look"}}]}
    lesson = lessons.parse(data, "sampling")
    text, arrays = lesson_export.build(lesson, model=model)
    assert text.count('class="plotly-graph-div"') == 1 and "T = 0: p = one-hot" in text
    trace = model.trace(list(lesson.prompts))
    z = trace.logits[0, trace.lengths[0] - 1].float()[None]
    p = smp.SHOWN
    ref = tf.TemperatureLogitsWarper(p.temperature)(None, z)
    ref = tf.TopKLogitsWarper(p.top_k)(None, ref)
    ref = tf.TopPLogitsWarper(p.top_p)(None, ref)
    ref = torch.softmax(ref, -1)[0]
    # one float32 softmax against another over the same kept set: within ~1e-7; 1e-6 leaves room for other CPUs
    assert torch.allclose(torch.as_tensor(arrays["step1/probs"]), ref, atol=1e-6)
    fig, _ = lesson_export.sampling_view(model, trace, trace.lengths[0], ["x"], 10)
    now = fig.data[1]      # the solid bars: the ten largest raw logits' probabilities, in that order, the drawn token
    top = z[0].topk(10).indices.tolist()                     # in the last place when the draw fell outside them
    drawn = int(smp.sample_stages(z[0], trace.token_ids[0, :trace.lengths[0]].tolist(), p,
                                  smp.make_generator(p.seed))["chosen"])
    top[-1] = top[-1] if drawn in top else drawn
    assert fig.layout.xaxis.range == (0, 1)
    assert torch.allclose(torch.tensor(now.x, dtype=torch.float64), ref[top].double(), atol=1e-6)
