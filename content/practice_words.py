"""The practice page's longer sentences in both languages (the page keeps only short labels): the bank's legend,
the live quiz's introduction, hints and verdicts, and the mock interview's. say(key, lang, **values) fills one."""
from __future__ import annotations

WORDS = {  # key: (zh, en); {name} is filled by say()
    "browse_caption": (
        "共 {count} 题。{seed} = 源文档中的面试题（已按事实校正）；{calc} = 答案在显示时从模型 "
        "config 算出；★ 越多越难（1–3）。",
        "{count} questions. {seed} = from the source documents (facts corrected); {calc} = the answer is computed "
        "from the model configs as the page renders; more ★, harder (1–3)."),
    "search_hint": ("如 KV cache、RoPE、GQA", "e.g. KV cache, RoPE, GQA"),
    "bank_error": ("题库读取失败：", "Could not read the question bank: "),
    "quiz_needs_trace": ("测验需要一个 trace：请先在左侧加载模型并输入提示词。",
                         "The quiz needs a trace: load a model and type a prompt in the sidebar."),
    "quiz_intro": (
        "题目来自**你刚运行的 trace**（{name}，提示词 B = {B} 行，补齐后 S = {S}）和模型 config、在它上面重跑的实验，"
        "以及服务章节；答案都在此刻算出。先预测，再揭晓。",
        "The questions come from **the trace you just ran** ({name}, B = {B} prompt(s), padded to S = {S}) and the "
        "model's config, experiments rerun on it, and the serving chapter; every answer is computed now. Predict "
        "first, then reveal."),
    "hint_shape": ("形状写成 [1, 4, 896] 或 1x4x896", "Write a shape as [1, 4, 896] or 1x4x896"),
    "hint_number": ("写一个数：12288、12,288、1.2 GiB、3.3e9、32.76B、12 万都可以",
                    "Write a number: 12288, 12,288, 1.2 GiB, 3.3e9 or 32.76B all work"),
    "hint_tol": ("（误差 1% 以内算对）", " (within 1% counts)"),
    "quiz_empty": ("先写下你的预测，再点“揭晓”。", "Type your prediction first, then press Reveal."),
    "quiz_unreadable": ("看不懂“{text}”。{hint}。", "Could not read “{text}”. {hint}."),
    "quiz_right": ("✓ 答对了！你的答案 {text}；正确答案 **{true}**（{where}）。",
                   "✓ Right! Your answer {text}; the true value is **{true}** ({where})."),
    "quiz_wrong": ("✗ 不对。你的答案 {text}；正确答案 **{true}**（{where}）。",
                   "✗ Not quite. Your answer {text}; the true value is **{true}** ({where})."),
    "shape_legend": ("B 批大小 · S 序列长度 · H 隐藏维度 · nh/nkv 查询/KV 头数 · hd 头维度 · I MLP 宽度 · V 词表行数",
                     "B batch · S sequence · H hidden · nh/nkv query/KV heads · hd head dim · I MLP width · "
                     "V vocab rows"),
    "mock_intro": (
        "从题库里抽 N 道题，尽量分散到不同阶段和难度，从易到难一题一题问。先写下你的回答，再揭晓参考答案，"
        "然后如实给自己打分：答对 1 分，部分对 0.5 分，答错 0 分。"
        "在本页上操作时题目不变；刷新浏览器或点“新的面试”会重新抽题。",
        "N questions drawn from the bank, spread across stages and difficulty levels, asked one at a time from easy "
        "to hard. Write your answer, reveal the model answer, then grade yourself honestly: right 1 point, partly "
        "0.5, wrong 0. Working on the page keeps the same questions; reloading the browser or “New interview” "
        "draws again."),
    "mock_empty": ("先写下你的回答（哪怕只有几个词），再点“揭晓”。",
                   "Write your answer first (a few words will do), then press Reveal."),
    "mock_computed": ("［实算］这道题的数值此刻按 {config} 的 config 算出（ops/arith/）：**{value}**。",
                      "[computed] This answer's value is computed now from {config}'s config (ops/arith/): "
                      "**{value}**."),
    "mock_grade": ("对照参考答案，你答得怎么样？", "Against the model answer, how did you do?"),
    "mock_done": ("面试结束：{graded} 道题，得分 {points} / {graded}（{percent:.0f}%）。",
                  "Interview over: {graded} questions, {points} / {graded} points ({percent:.0f}%)."),
    "mock_review_none": ("全部答对，没有要复习的题。", "All right: nothing to review."),
    "mock_none": ("所选难度下题库里没有题目。", "The bank has no questions at the chosen levels."),
}


def say(key: str, lang: str, **values) -> str:
    """The sentence `key` in lang ("zh" | "en"), its {names} filled from values."""
    zh, en = WORDS[key]
    text = zh if lang == "zh" else en
    return text.format(**values) if values else text
