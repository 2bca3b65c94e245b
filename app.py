"""Operator Lab (算子实验室): step a prompt through a real Qwen2.5 model, one operator at a time.

    streamlit run app.py
"""
import streamlit as st

st.set_page_config(page_title="Operator Lab · 算子实验室", page_icon="🔬", layout="wide")

import viz  # noqa: E402,F401  (sets the plotly template every page's figures use)
from ui import sidebar, state  # noqa: E402  (after set_page_config)

state.init_state()

PAGES = [  # (file, url path, 中文, English, icon)
    ("overview", "总览", "Overview", "🗺️"),
    ("tokenize", "1 分词", "1 Tokenize", "✂️"),
    ("embedding", "2 嵌入", "2 Embedding", "📖"),
    ("rmsnorm", "3 RMSNorm", "3 RMSNorm", "📏"),
    ("attention", "4 注意力", "4 Attention", "👀"),
    ("residual", "5 残差相加", "5 Residual add", "➕"),
    ("mlp", "6 MLP / MoE", "6 MLP / MoE", "🧮"),
    ("lm_head", "7 LM Head", "7 LM head", "🎯"),
    ("sampling", "8 采样", "8 Sampling", "🎲"),
    ("generate", "9 生成", "9 Generate", "🔁"),
    ("tour", "课堂演示", "Classroom tour", "🎓"),
    ("scale", "规模", "Scale", "📐"),
    ("practice", "面试练习", "Interview practice", "📝"),
]

pages = [st.Page(f"app_pages/{name}.py", title=state.t(zh, en), icon=icon, url_path=name, default=(name == "overview"))
         for name, zh, en, icon in PAGES]
nav = st.navigation(pages)
sidebar.render()
try:
    nav.run()
finally:
    state.trim_heap()          # a page's freed temporaries leave the resident set (a class keeps the server up for hours)
