"""The sidebar every page shares: model source, device and dtype, prompts, chat toggle, language."""
from __future__ import annotations

import streamlit as st
import torch

from classroom import mode as class_mode
from content import prompts
from content.words import say
from ops.engine import inputs
from ops.engine.inputs import token_limit
from ops.fast import native

from . import state
from .blocks import drawn, lazy
from .session import drop_surrogates, follow_language, lang, set_query, settings, t
from .state import get_model


def navigation(pages: dict):
    """Every page as a link, in the registry's order (none folded away behind "View more")."""
    with st.sidebar:
        for key, page in pages.items():
            st.page_link(page, label=page.title, icon=page.icon)


def render(pages: dict | None = None):
    """Draw the sidebar: the prompt box at the top, then the page links (`pages`, navigation), then the settings;
    returns the loaded model (or None after an error shown in the page)."""
    sb = st.sidebar
    sb.title(t("算子实验室", "Operator Lab"))
    bound(sb.radio, t("语言", "Language"), "lang", ["zh", "en"], horizontal=True,
          format_func={"zh": "中文", "en": "English"}.get)     # each language named in itself
    set_query("lang", st.session_state.lang)
    batch = inputs.batch_limit()
    if drop_surrogates():
        sb.info(say("sidebar.surrogates_replaced", lang()))
    with sb:                                 # first, above the page links: what a class changes most (issue 42)
        prompt_box()
        examples()
    bound(sb.toggle, t("套用聊天模板 (ChatML)", "Apply the chat template (ChatML)"), "chat")
    if pages:
        navigation(pages)
    bound(sb.toggle, t("投影模式", "Projector mode"), "projector",
          help=say("sidebar.projector_help", lang()))
    if st.session_state.projector:
        set_query("projector", "1")
    elif "projector" in st.query_params:
        del st.query_params["projector"]

    # The model's settings and card draw only when unfolded (every element costs the browser on each page switch);
    # in classroom mode always, where _classroom_models also refuses a source that is not allowed.
    room = class_mode.classroom_mode()
    box = drawn(sb.expander(t("模型", "Model"), expanded=False, **({} if room else lazy("sidebar-model"))))
    card = None
    if box is not None:
        with box:
            _model_settings(room)
            card = st.container()

    s = settings()
    if s.prompts:
        set_query("prompt", "\n".join(s.prompts))
    set_query("chat", "1" if s.chat else "0")
    model = get_model()
    line = f"B = {min(len(s.prompts), batch)}" + (t(" · 课堂模式", " · classroom mode") if room else "")
    if model is not None:
        c = model.config
        dtype = str(model.dtype).replace("torch.", "")
        line = f"**{c.name or s.source}** · `{c.model_type}` · {model.device} · {dtype} · {line}"
        if card is not None:
            card.markdown(
                f"| | |\n|---|---|\n"
                f"| {t('层数', 'layers')} L | {c.num_hidden_layers} |\n"
                f"| {t('隐藏维度', 'hidden')} H | {c.hidden_size} |\n"
                f"| {t('注意力头 / KV 头', 'heads / KV heads')} | {c.num_attention_heads} / {c.num_key_value_heads} |\n"
                f"| {t('头维度', 'head dim')} | {c.head_dim} |\n"
                f"| MLP I | {c.intermediate_size} |\n"
                f"| {t('词表（嵌入行数）', 'vocab (embedding rows)')} | {c.vocab_size:,} |\n"
                f"| {t('分词器词数', 'tokenizer tokens')} | {model.tokenizer.vocab_size:,} |\n"
                f"| {t('参数量', 'parameters')} | {model.num_parameters:,} |\n"
                f"| {t('最长输入', 'token limit')} | {token_limit(c):,} |")
    sb.markdown(line)
    failed = state.BACKGROUND_FAILURES
    if failed:           # work done ahead of a page failed: that page does it (and reports it) when it is opened
        sb.caption(say("sidebar.background_failed", lang(), n=len(failed)) + " " + "; ".join(failed[-3:]))
    if why := native.why_not():          # the app's native build failed, or the CPU cannot take it
        sb.caption(say("sidebar.native_kernel", lang()) + why)
    return model


def prompt_box(where: str = ""):
    """The prompt text area, bound to the prompt_text setting; `where` names a second box of it (on a page: the
    tour's, projector mode's), which gets its own widget key and stays in step with the sidebar's."""
    batch = inputs.batch_limit()
    bound(st.text_area, say("sidebar.prompt_label", lang(), batch=batch),
          "prompt_text", height=110, max_chars=inputs.MAX_CHARS, suffix=where, help=say("sidebar.prompt_help", lang()))


def examples():
    """The curated prompts (content/prompts.py) in a selectbox: a choice fills the prompt box, in the current
    language."""
    keys = [c.key for c in prompts.CURATED]
    st.selectbox(t("例句", "Example prompts"), keys, index=None, key="w_example", on_change=_use_example,
                 format_func=lambda k: prompts.get(k).title(lang()),
                 placeholder=say("sidebar.examples_placeholder", lang()))


def _use_example():
    key = st.session_state.get("w_example")
    if key:
        st.session_state.prompt_text = prompts.get(key).prompt(st.session_state.lang)


def page_prompt(where: str = "page", short: bool = False):
    """A prompt box on the page itself, folded into a small button: the sidebar is folded away on a projector,
    and the tour is run in front of a class. short: the button is the pencil alone (in the lesson bar's row)."""
    label = t("✏️ 换一句提示词", "✏️ New prompt")             # short: the tour gives it a sixth of the row
    with st.popover("✏️" if short else label, help=label if short else None, width="stretch" if short else "content"):
        prompt_box(where)


def _model_settings(room: bool):
    """Model source (bundled or a path; allow-listed ones in classroom mode), device and dtype."""
    if room:
        _classroom_models()
    labels = {"default": t("内置：Qwen2.5-Coder-0.5B-Instruct", "Bundled: Qwen2.5-Coder-0.5B-Instruct"),
              "path": t("模型文件夹或 GGUF 文件", "A model folder or a GGUF file")}
    choice = "classroom" if room else st.radio(
        t("模型来源", "Model source"), ["default", "path"],
        index=0 if st.session_state.source == "default" else 1, format_func=labels.get)
    if choice == "path":
        path = st.text_input(say("sidebar.path_label", lang()),
                             value="" if st.session_state.source == "default" else st.session_state.source)
        if st.button(t("加载", "Load")) and path.strip():
            st.session_state.source = path.strip()
    elif choice == "default":
        st.session_state.source = "default"
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    _choice(t("设备", "Device"), devices, "device")
    dtypes = ["float32", "bfloat16"] + (["float16"] if st.session_state.device == "cuda" else [])
    _choice(t("精度", "dtype"), dtypes, "dtype",
            help=say("sidebar.dtype_help", lang()))


def _choice(label: str, options: list, setting: str, **kw):
    """A selectbox for a setting, the setting moved onto the first option when the options no longer hold it."""
    if st.session_state[setting] not in options:
        st.session_state[setting] = options[0]
    bound(st.selectbox, label, setting, options, **kw)


def bound(widget, label: str, setting: str, *args, suffix: str = "", **kw):
    """widget(label, ...) for a sidebar setting that lives in session_state under its own name; the widget has the
    key "w_<setting>" and copies its value over when the user changes it. Streamlit puts a widget's key back to
    the widget's default after a run that did not draw it (the model fold closed) or that the browser did not
    report it in (a page switch: Chinese and an empty prompt, bench/RESULTS.md "Night"); the setting's own key
    is never touched, and the widget is set from it again. A second widget of one setting adds a key suffix."""
    ss, key = st.session_state, "w_" + setting + (f"_{suffix}" if suffix else "")
    if ss.get(key) != ss[setting]:
        ss[key] = ss[setting]
    return widget(label, *args, key=key, on_change=_copy, args=(key, setting), **kw)


def _copy(key: str, setting: str):
    st.session_state[setting] = st.session_state[key]
    if setting == "lang":
        follow_language()            # a prompt still at the other language's default follows the language


def _classroom_models():
    """Classroom mode: a selectbox of the bundled model and the allow-listed ones; never a free path."""
    models = {t("内置：Qwen2.5-Coder-0.5B-Instruct", "Bundled: Qwen2.5-Coder-0.5B-Instruct"): "default",
              **class_mode.allowed_models()}
    labels = list(models)
    current = st.session_state.source
    if current not in models.values():          # e.g. a forged session value or an old shared link
        st.error(say("sidebar.source_refused", lang(), source=current))
    index = next((i for i, lab in enumerate(labels) if models[lab] == current), 0)
    label = st.selectbox(say("sidebar.classroom_models", lang()), labels, index=index)
    st.session_state.source = models[label]
