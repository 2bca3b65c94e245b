"""The "do it by hand" blocks under the plain-language explanation (StagePage.explain(..., by_hand=...)): small
numbers a learner can change, every step written out. The arithmetic is ops/arith/worked_math.py; the dial is
viz/worked.py.
Every widget key starts with "hand_" (none is kept in the URL), and a value the widgets allow never raises."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ops.arith import worked_math
from viz.worked import rope_clock

from .blocks import chart, table
from .session import t

HAND_TITLE = ("动手算一遍", "Do it by hand")


def _g(x: float) -> str:
    """An input as the learner typed it: 2, -1.5, 0.25."""
    return f"{x:g}"


def _r(x: float) -> str:
    """A result to four significant digits (large exp values in e-notation)."""
    return "−∞" if x == -math.inf else f"{x:.4g}"


def _sq(x: float) -> str:
    return f"({_g(x)})²" if x < 0 else f"{_g(x)}²"


def _vec(v) -> str:
    return "(" + ", ".join(_r(a) for a in v) + ")"


# ---- softmax of three logits at a temperature ------------------------------------------------------------------
def softmax_block():
    st.markdown(t("#### 三个 logit 的 softmax，带温度 T", "#### Softmax of three logits at a temperature T"))
    cols = st.columns(4)
    z = [cols[j].number_input(f"z{j + 1}", -10.0, 10.0, d, 0.5, key=f"hand_sm_z{j}") for j, d in enumerate((2.0, 1.0,
                                                                                                            0.0))]
    T = cols[3].number_input(t("温度 T（> 0）", "temperature T (> 0)"), 0.1, 5.0, 1.0, 0.1, key="hand_sm_T")
    r = worked_math.softmax_steps(z, T)
    table([{"i": str(j + 1), "z": _g(z[j]), "z / T": _r(r["scaled"][j]), "exp(z / T)": _r(r["exp_raw"][j]),
            "p": f"{r['probs'][j]:.4f}"} for j in range(3)])
    e = r["exp_raw"]
    st.code("\n".join([
        "z / T  = " + ",  ".join(f"{_g(a)} / {_g(T)} = {_r(b)}" for a, b in zip(z, r["scaled"])),
        "exp    = " + ",  ".join(f"e^{_r(b)} = {_r(x)}" for b, x in zip(r["scaled"], e)),
        t("总和   = ", "sum    = ") + " + ".join(_r(x) for x in e) + f" = {_r(r['sum_raw'])}",
        "p      = " + ",  ".join(f"{_r(x)} / {_r(r['sum_raw'])} = {p:.4f}" for x, p in zip(e, r["probs"])),
        t("p 之和 = ", "Σ p    = ") + f"{sum(r['probs']):.4f}"]), language=None)
    st.caption(t(f"代码里会先减去最大值 m = {_r(r['max'])} 再取 exp：分子分母同乘 e^(−m)，概率不变，只是不会溢出。",
                 f"Code subtracts the largest value m = {_r(r['max'])} before exp: top and bottom are both multiplied "
                 "by e^(−m), so the probabilities are the same, and nothing overflows."))
    rows = worked_math.softmax_temperatures(z)
    table([{"T": _g(x["T"]), **{f"p{j + 1}": f"{x['probs'][j]:.3f}" for j in range(3)}} for x in rows])
    st.caption(t("同样三个 logit：T = 0.5 把差距放大一倍（最大的那个更突出），T = 2 把差距缩小一半（更平均）。"
                 "T 越接近 0 越像直接取最大（贪心）。",
                 "The same three logits: T = 0.5 doubles their gaps (the largest stands out more), T = 2 halves them "
                 "(flatter). As T approaches 0 it becomes “take the largest” (greedy)."))


# ---- RoPE as clock hands -----------------------------------------------------------------------------------------
CLOCK_POSITIONS = 12


def rope_block(base: float | None = None, hd: int | None = None):
    st.markdown(t("#### RoPE 像钟表的指针：一对维度按位置转动",
                  "#### RoPE as clock hands: one pair of dimensions turned by position"))
    cols = st.columns(4)
    q = (cols[0].number_input("q0", -5.0, 5.0, 1.0, 0.5, key="hand_rope_q0"),
         cols[1].number_input("q1", -5.0, 5.0, 0.0, 0.5, key="hand_rope_q1"))
    k = (cols[2].number_input("k0", -5.0, 5.0, 1.0, 0.5, key="hand_rope_k0"),
         cols[3].number_input("k1", -5.0, 5.0, 0.0, 0.5, key="hand_rope_k1"))
    cols = st.columns(4)
    theta = cols[0].slider(t("频率 θ（弧度 / 位置）", "frequency θ (rad per position)"), 0.05, 3.0, 1.0, 0.05,
                           key="hand_rope_theta")
    m = cols[1].slider(t("q 的位置 m", "q's position m"), 0, CLOCK_POSITIONS, 2, key="hand_rope_m")
    n = cols[2].slider(t("k 的位置 n", "k's position n"), 0, CLOCK_POSITIONS, 5, key="hand_rope_n")
    s = cols[3].slider(t("两者同时后移 s", "move both by s"), 0, CLOCK_POSITIONS, 3, key="hand_rope_s")
    hands = worked_math.rope_clock(q, theta, range(CLOCK_POSITIONS + 1))
    k_at = worked_math.rope_clock(k, theta, [n])[0]
    chart(rope_clock(hands, hands[m], k_at, names=(t("q 在每个位置 m", "q at every position m"), f"q @ m = {m}",
                                                   f"k @ n = {n}"),
                     title=t(f"q 每个位置转 θ = {theta:g} 弧度（{math.degrees(theta):.1f}°）",
                             f"q turns θ = {theta:g} rad ({math.degrees(theta):.1f}°) per position")), key="hand-rope")
    a, b = worked_math.rope_dot(q, k, m, n, theta), worked_math.rope_dot(q, k, m + s, n + s, theta)
    st.code("\n".join([
        f"R(mθ) q = R({m}·{theta:g}) {_vec(q)} = {_vec(a['q_rot'])}",
        f"R(nθ) k = R({n}·{theta:g}) {_vec(k)} = {_vec(a['k_rot'])}",
        t("点积", "dot") + f" (m={m}, n={n})        = {a['dot']:.4f}",
        t("点积", "dot") + f" (m={m + s}, n={n + s})        = {b['dot']:.4f}",
        f"q · R((n−m)θ) k = q · R({n - m}·{theta:g}) k = {a['via_offset']:.4f}"]), language=None)
    st.caption(t(f"两个位置同时后移 {s}，点积不变：旋转后的点积只取决于两个向量和位置差 n − m = {n - m}，与绝对位置无关"
                 "。",
                 f"Moving both positions by {s} leaves the dot product unchanged: after rotation it depends only on "
                 "the two "
                 f"vectors and the offset n − m = {n - m}, never on where they sit."))
    rows = worked_math.rope_offsets(q, k, theta, range(CLOCK_POSITIONS + 1))
    table([{t("位置差 n − m", "offset n − m"): str(x["offset"]), t("转角 (n − m)·θ（弧度）",
                                                                "(n − m)·θ (rad)"): f"{x['angle']:.2f}",
            t("表盘上相差",
              "apart on the dial"): f"{x['degrees']:.1f}°", "q · R((n−m)θ) k": f"{x['dot']:.3f}"} for x in rows])
    back = [x["offset"] for x, y in zip(rows, rows[1:]) if abs(y["degrees"]) < abs(x["degrees"])]
    st.caption(t("转角会绕圈：超过 180° 之后两根指针反而靠近，" + (f"例如位置差 {back[0]} → {back[0] + 1} 时夹角变小了"
                                                                   "。" if back else "把 θ 调大就能看到。")
                 + "所以“离得越远、夹角越大”并不总成立；模型用很多对不同频率的维度，快的分辨近处，慢的分辨远处。",
                 "The angle wraps around: past 180° the two hands come closer again, "
                 + (f"e.g. from offset {back[0]} to {back[0] + 1} the angle shrinks. " if back else "raise θ to see "
                                                                                                    "it. ")
                 + "So “farther apart” is not always “a bigger angle”; the model uses many pairs at different "
                   "frequencies: fast ones tell near positions apart, slow ones far ones."))
    if base and hd:
        slow = base ** (-(hd - 2) / hd)
        st.caption(t(f"这个模型里第 j 对每个位置转 θ_j = {base:g}^(−2j/{hd})：最快的第 0 对是 1 弧度（57.3°），"
                     f"最慢的一对只有 {slow:.2e} 弧度。",
                     f"In this model pair j turns θ_j = {base:g}^(−2j/{hd}) per position: the fastest, pair 0, turns 1 "
                     "rad "
                     f"(57.3°); the slowest only {slow:.2e} rad."))


# ---- one attention row from three tokens -------------------------------------------------------------------------
ATTN_DEFAULT = dict(q0=[1, 0, 1], q1=[0, 1, 2], k0=[1, 0, 2], k1=[0, 2, 0], v0=[1, 0, 2], v1=[0, 1, 2])


def _grid(key: str) -> tuple[list, list, list]:
    df = pd.DataFrame(ATTN_DEFAULT, index=pd.Index(["0", "1", "2"], name="j"))
    cfg = {c: st.column_config.NumberColumn(c, min_value=-9, max_value=9, step=1) for c in ATTN_DEFAULT}
    got = st.data_editor(df, key=key, num_rows="fixed", column_config=cfg, width="stretch")
    # a cleared cell is 0
    got = got.reindex(columns=list(ATTN_DEFAULT)).apply(pd.to_numeric, errors="coerce").fillna(0.0)
    rows = got.to_numpy(dtype=float).tolist()
    pick = lambda a, b: [[r[a], r[b]] for r in rows]       # noqa: E731
    return pick(0, 1), pick(2, 3), pick(4, 5)


def attention_block():
    st.markdown(t("#### 三个 token 的一行注意力，每个数都写出来",
                  "#### One attention row from three tokens, every number written out"))
    st.caption(t("每个 token j 有二维的 q、k、v（可直接改表格里的整数）。",
                 "Each token j has a 2-D q, k and v (edit the integers in the table)."))
    q, k, v = _grid("hand_attn_grid")
    i = st.radio(t("哪个查询 i（第 i 个 token 在看）", "which query i (token i is looking)"), [0, 1, 2], index=2,
                 horizontal=True, key="hand_attn_i")
    r = worked_math.attention_row(q, k, v, i)
    vis = t("可见", "visible")
    table([{"j": str(j), f"q{i} · k_j": _r(r["dots"][j]), f"/ √{r['d']}": _r(r["scores"][j]),
            t("掩码", "mask"): vis if r["visible"][j] else "−∞", "exp": _r(r["exp"][j]), "p": f"{r['probs'][j]:.4f}",
            "p · v": _vec([r["probs"][j] * x for x in v[j]])} for j in range(3)])
    lines = [f"q{i} · k{j} = " + " + ".join(f"{_g(a)}·{_g(b)}" for a, b in zip(q[i], k[j])) + f" = {_r(r['dots'][j])}"
             + f",  / √{r['d']} = {_r(r['scores'][j])}" + ("" if r["visible"][j] else t("  → 未来的 token，屏蔽为 −∞",
                                                                                        "  → a future token, masked to "
                                                                                        "−∞"))
             for j in range(3)]
    seen = [j for j in range(3) if r["visible"][j]]
    lines += [f"softmax: exp(s − {_r(r['max'])}) = " + ", ".join(_r(r["exp"][j]) for j in seen)
              + t("，总和 ", ", sum ") + _r(r["sum"]) + " → p = " + ", ".join(f"{r['probs'][j]:.4f}" for j in seen),
              "out = " + " + ".join(f"{r['probs'][j]:.4f}·{_vec(v[j])}" for j in seen) + f" = {_vec(r['out'])}"]
    st.code("\n".join(lines), language=None)
    st.caption(t(f"查询 {i} 只能看位置 0…{i}（因果掩码）；被屏蔽的分数是 −∞，exp(−∞) = 0。输出是可见 v 的加权平均，权重"
                 "就是 p。",
                 f"Query {i} may look at positions 0…{i} only (the causal mask); a masked score is −∞ and exp(−∞) = 0. "
                 "The output is the average of the visible v, weighted by p."))


# ---- RMSNorm of four numbers ---------------------------------------------------------------------------------------
def rmsnorm_block(eps: float = 1e-6):
    st.markdown(t("#### 四个数的 RMSNorm", "#### RMSNorm of four numbers"))
    cols = st.columns(4)
    x = [cols[j].number_input(f"x{j}", -100.0, 100.0, d, 0.5, key=f"hand_rms_x{j}") for j, d in enumerate((1.0, -2.0,
                                                                                                           3.0, 2.0))]
    cols = st.columns(4)
    g = [cols[j].number_input(f"g{j}", -10.0, 10.0, d, 0.5, key=f"hand_rms_g{j}") for j, d in enumerate((1.0, 1.0, 0.5,
                                                                                                         2.0))]
    e = st.radio("ε", sorted({float(eps), 0.01, 1.0}), horizontal=True, key="hand_rms_eps",
                 format_func=lambda v: f"{v:g}",
                 help=t("模型自己的 ε 最小；调大可以看到它对很小的输入有多大影响。",
                        "The model's own ε is the smallest; raise it to see how much it matters for small inputs."))
    r = worked_math.rmsnorm_steps(x, g, e)
    st.code("\n".join([
        "x²            = " + " + ".join(_sq(a) for a in x) + f" = {_r(r['sum'])}",
        t("平均 x²       = ", "mean of x²    = ") + f"{_r(r['sum'])} / 4 = {_r(r['mean'])}",
        f"+ ε           = {_r(r['mean'])} + {e:g} = {r['mean'] + e:.7g}",          # 7 digits: a small ε stays visible
        f"rsqrt         = 1 / √{r['mean'] + e:.7g} = {_r(r['inv'])}",
        f"x · rsqrt     = {_vec(r['normed'])}",
        f"y = g · x · rsqrt = {_vec(r['y'])}"]), language=None)
    dim = lambda j: t(f"维 {j}", f"dim {j}")    # noqa: E731
    table([{t("步骤", "step"): name, **{dim(j): _r(vals[j]) for j in range(4)}}
           for name, vals in (("x", r["x"]), ("x²", r["sq"]), ("x · rsqrt", r["normed"]), ("g", r["g"]), ("y",
                                                                                                          r["y"]))])
    if r["sum"] == 0:
        st.info(t(f"四个数全是 0：平均为 0，没有 ε 就要除以 0。有了 ε，1/√ε = {_r(r['inv'])} 是一个有限的数，y 仍然全是"
                  " 0。",
                  f"All four are 0: the mean is 0, and without ε this would divide by 0. With ε, 1/√ε = {_r(r['inv'])} "
                  "is "
                  "finite, and y stays all 0."))
    else:
        st.caption(t(f"除以 RMS = {_r(r['rms'])} 之后，x · rsqrt 的平方平均约为 1；再由 g 逐维放大或缩小。",
                     f"After dividing by RMS = {_r(r['rms'])}, the squares of x · rsqrt average about 1; g then scales "
                     "each dimension up or down."))


def attention_blocks(base: float | None = None, hd: int | None = None):
    """The attention page's two: RoPE's clock hands, then one attention row."""
    rope_block(base, hd)
    st.divider()
    attention_block()
