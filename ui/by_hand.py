"""The "do it by hand" blocks under the plain-language explanation (StagePage.explain(..., by_hand=...)): small
numbers a learner can change, every step written out. The arithmetic is ops/arith/worked_math.py; the dial is
viz/by_hand.py.
Every widget key starts with "hand_" (none is kept in the URL), and a value the widgets allow never raises."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from content.words import say
from ops.arith import worked_math
from viz.by_hand import rope_clock

from .blocks import chart, table
from .session import lang, t

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
    st.markdown(say("by_hand.softmax_title", lang()))
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
    st.caption(say("by_hand.softmax_stable", lang(), m=_r(r["max"])))
    rows = worked_math.softmax_temperatures(z)
    table([{"T": _g(x["T"]), **{f"p{j + 1}": f"{x['probs'][j]:.3f}" for j in range(3)}} for x in rows])
    st.caption(say("by_hand.softmax_temperatures", lang()))


# ---- RoPE as clock hands -----------------------------------------------------------------------------------------
CLOCK_POSITIONS = 12
ROTATED_DOT = "q · R((n−m)θ) k"        # the dot product after rotation, written as a formula


def rope_block(base: float | None = None, hd: int | None = None):
    st.markdown(say("by_hand.rope_title", lang()))
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
                     title=say("by_hand.rope_turns", lang(), theta=f"{theta:g}", deg=f"{math.degrees(theta):.1f}")),
          key="hand-rope")
    a, b = worked_math.rope_dot(q, k, m, n, theta), worked_math.rope_dot(q, k, m + s, n + s, theta)
    st.code("\n".join([
        f"R(mθ) q = R({m}·{theta:g}) {_vec(q)} = {_vec(a['q_rot'])}",
        f"R(nθ) k = R({n}·{theta:g}) {_vec(k)} = {_vec(a['k_rot'])}",
        t("点积", "dot") + f" (m={m}, n={n})        = {a['dot']:.4f}",
        t("点积", "dot") + f" (m={m + s}, n={n + s})        = {b['dot']:.4f}",
        f"{ROTATED_DOT} = q · R({n - m}·{theta:g}) k = {a['via_offset']:.4f}"]), language=None)
    st.caption(say("by_hand.rope_shift", lang(), s=s, offset=n - m))
    rows = worked_math.rope_offsets(q, k, theta, range(CLOCK_POSITIONS + 1))
    table([{t("位置差 n − m", "offset n − m"): str(x["offset"]), t("转角 (n − m)·θ（弧度）",
                                                                "(n − m)·θ (rad)"): f"{x['angle']:.2f}",
            t("表盘上相差",
              "apart on the dial"): f"{x['degrees']:.1f}°", ROTATED_DOT: f"{x['dot']:.3f}"} for x in rows])
    back = [x["offset"] for x, y in zip(rows, rows[1:]) if abs(y["degrees"]) < abs(x["degrees"])]
    example = (say("by_hand.rope_wrap_seen", lang(), a=back[0], b=back[0] + 1) if back
               else say("by_hand.rope_wrap_unseen", lang()))
    st.caption(say("by_hand.rope_wrap", lang(), example=example))
    if base and hd:
        slow = base ** (-(hd - 2) / hd)
        st.caption(say("by_hand.rope_model", lang(), base=f"{base:g}", hd=hd, slow=f"{slow:.2e}"))


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
    st.markdown(say("by_hand.attn_title", lang()))
    st.caption(say("by_hand.attn_grid", lang()))
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
    st.caption(say("by_hand.attn_causal", lang(), i=i))


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
                 help=say("by_hand.rms_eps_help", lang()))
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
        st.info(say("by_hand.rms_zero", lang(), inv=_r(r["inv"])))
    else:
        st.caption(say("by_hand.rms_after", lang(), rms=_r(r["rms"])))


def attention_blocks(base: float | None = None, hd: int | None = None):
    """The attention page's two: RoPE's clock hands, then one attention row."""
    rope_block(base, hd)
    st.divider()
    attention_block()
