"""Conceptual diagrams of the book (import diagrams; the kernel runs in book/).

One function per diagram. Each draws with matplotlib patches and text only (no data, no
randomness), labels in Korean following book/glossary.yml, and returns the Figure. Functions
that take ``ax`` draw into it when given one; the others make their own multi-panel figure.
Text is set in DejaVu Sans and the course's Korean font (koreanfont.korean_plot, which registers
the font by its path), whatever matplotlib's font cache or rc holds.
"""

import math
import re

import matplotlib.pyplot as plt
import numpy as np
from koreanfont import korean_plot
from matplotlib import colors as mcolors
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.transforms import offset_copy

# One colour per role, used the same way in every diagram.
C = {
    "q": "#3b6fb6",  # query
    "k": "#e08a2c",  # key
    "v": "#3a9a5b",  # value
    "attn": "#7b5ea7",  # attention sub-layer
    "norm": "#b59a1a",  # normalization
    "ffn": "#2a9bb3",  # feed-forward network
    "emb": "#7f7f7f",  # embeddings, inputs, outputs
    "pos": "#c0504d",  # positional information
    "res": "#c0504d",  # residual path
    "blocked": "#d0d0d0",
    "ink": "#222222",
}
HEAD_COLORS = [
    "#3b6fb6",
    "#e08a2c",
    "#3a9a5b",
    "#7b5ea7",
    "#c0504d",
    "#2a9bb3",
    "#b59a1a",
    "#8c564b",
]


def _light(color, amount=0.78):
    """Mix a colour with white (amount = share of white)."""
    r, g, b = mcolors.to_rgb(color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


_MATH = re.compile(r"(\$[^$]*\$)")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _text(
    ax, x, y, s, ha="center", va="center", fontsize=9, color=C["ink"], weight="normal", rotation=0
):
    """Text at data point (x, y) that may mix Korean and $math$ on one line.

    Mathtext draws a whole string with its own fonts, which have no Korean glyphs, so a line that
    mixes the two is split into pieces drawn side by side, each with the right font. Lines are
    stacked by hand (line spacing 1.3 x font size); offsets are in points, so they scale with dpi.
    """
    fig = ax.figure
    lines = s.split("\n")
    lh = fontsize * 1.3
    n = len(lines)
    first = {
        "center": (n - 1) / 2 * lh,
        "top": -0.55 * fontsize,
        "bottom": (n - 1) * lh + 0.55 * fontsize,
    }
    first["baseline"] = first["bottom"]
    renderer = fig.canvas.get_renderer()
    style = dict(fontsize=fontsize, color=color, weight=weight)
    for k, line in enumerate(lines):
        dy = first[va] - k * lh
        parts = [p for p in _MATH.split(line) if p]
        mixed = len(parts) > 1 and any(_HANGUL.search(p) for p in parts)
        if not mixed:
            ax.text(
                x,
                y,
                line,
                ha=ha,
                va="center",
                rotation=rotation,
                transform=offset_copy(ax.transData, fig=fig, x=0, y=dy, units="points"),
                **style,
            )
            continue
        pieces = [ax.text(x, y, p, ha="left", va="center", **style) for p in parts]
        widths = [t.get_window_extent(renderer).width * 72 / fig.dpi for t in pieces]
        start = {"left": 0.0, "center": -sum(widths) / 2, "right": -sum(widths)}[ha]
        for t, wdt in zip(pieces, widths, strict=True):
            t.set_transform(offset_copy(ax.transData, fig=fig, x=start, y=dy, units="points"))
            start += wdt


def _canvas(ax, xlim, ylim, figsize):
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    else:
        fig = ax.figure
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return fig, ax


def _box(ax, x, y, w, h, text, color, fontsize=9, fill=True, lw=1.3, ls="-", weight="normal"):
    """Rounded box centred at (x, y)."""
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.12",
            fc=_light(color) if fill else "none",
            ec=color,
            lw=lw,
            ls=ls,
        )
    )
    if text:
        _text(ax, x, y, text, ha="center", va="center", fontsize=fontsize, weight=weight)


def _arrow(ax, start, end, color=C["ink"], lw=1.3, style="-|>", rad=0.0, ls="-"):
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle=style,
            mutation_scale=11,
            color=color,
            lw=lw,
            ls=ls,
            shrinkA=0,
            shrinkB=0,
            connectionstyle=f"arc3,rad={rad}",
        )
    )


def _path(ax, points, color=C["ink"], lw=1.3):
    """Polyline through points with an arrow head on the last segment."""
    xs, ys = zip(*points[:-1], strict=True)
    ax.plot(xs, ys, color=color, lw=lw, solid_capstyle="round")
    _arrow(ax, points[-2], points[-1], color=color, lw=lw)


def _plus(ax, x, y, r=0.22, color=C["ink"]):
    """A summation node: circle with a plus sign."""
    ax.add_patch(Circle((x, y), r, fc="white", ec=color, lw=1.3))
    ax.plot([x - r * 0.6, x + r * 0.6], [y, y], color=color, lw=1.2)
    ax.plot([x, x], [y - r * 0.6, y + r * 0.6], color=color, lw=1.2)


def _cells(ax, x0, y0, grid, size=1.0, fc=None, text=None, fontsize=8, ec="white"):
    """Draw a (rows, cols) grid of square cells; row 0 on top. fc(i, j) / text(i, j) callables."""
    rows, cols = grid
    for i in range(rows):
        for j in range(cols):
            x, y = x0 + j * size, y0 - (i + 1) * size
            face = fc(i, j)
            ax.add_patch(Rectangle((x, y), size, size, fc=face, ec=ec, lw=1.0))
            if text is not None:
                t = text(i, j)
                if t:
                    dark = sum(mcolors.to_rgb(face)) < 1.5  # light text on dark cells
                    color = "white" if dark else C["ink"]
                    _text(ax, x + size / 2, y + size / 2, t, fontsize=fontsize, color=color)


# ---------------------------------------------------------------------------------------------
# Chapter 2: queries, keys and values; scaled dot-product attention


@korean_plot
def draw_qkv_flow(ax=None):
    """X is projected three times; Q and K make the weights, the weights mix V."""
    fig, ax = _canvas(ax, (0, 20), (0, 8.4), (10, 4.3))
    _box(ax, 1.6, 4.2, 2.6, 1.5, "입력 $X$\n$(T, d_{in})$", C["emb"], fontsize=10)
    roles = [
        ("q", 6.8, "쿼리 $Q = XW_q$\n$(T, d_k)$", "무엇을 찾는가"),
        ("k", 4.2, "키 $K = XW_k$\n$(T, d_k)$", "무엇을 가졌는가 (이름표)"),
        ("v", 1.6, "값 $V = XW_v$\n$(T, d_v)$", "실제로 전달되는 내용"),
    ]
    for key, y, label, role in roles:
        _arrow(ax, (2.9, 4.2), (5.0, y), color=C[key])
        _box(ax, 6.6, y, 3.2, 1.5, label, C[key], fontsize=9)
        _text(ax, 6.6, y - 1.0, role, ha="center", va="center", fontsize=8, color=C[key])
    _box(ax, 11.0, 5.5, 3.2, 1.5, "점수 $QK^\\top/\\sqrt{d_k}$\n$(T, T)$", C["attn"], fontsize=9)
    _arrow(ax, (8.2, 6.8), (9.4, 5.9), color=C["q"])
    _arrow(ax, (8.2, 4.2), (9.4, 5.1), color=C["k"])
    _box(ax, 14.6, 5.5, 2.8, 1.5, "소프트맥스\n(행마다, 키 방향)", C["attn"], fontsize=9)
    _arrow(ax, (12.6, 5.5), (13.2, 5.5))
    _text(ax, 14.6, 6.7, "어텐션 가중치 $A$, 행 합 = 1", ha="center", fontsize=8, color=C["attn"])
    _box(ax, 15.4, 1.9, 2.6, 1.5, "가중합\n$AV$", C["v"], fontsize=9)
    _arrow(ax, (14.6, 4.75), (15.1, 2.65))
    _arrow(ax, (8.2, 1.6), (14.1, 1.8), color=C["v"])
    _box(ax, 18.5, 1.9, 2.6, 1.5, "문맥 벡터 $Z$\n$(T, d_v)$", C["emb"], fontsize=9)
    _arrow(ax, (16.7, 1.9), (17.2, 1.9))
    ax.set_title("쿼리·키·값의 데이터 흐름: 같은 입력을 세 번 투영합니다", fontsize=11)
    return fig


# Small fixed example for the step-by-step figure: T = 3 queries and keys, d_k = 4, d_v = 2.
_Q = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
_K = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [2.0, 0.0, 1.0, 1.0]])
_V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def _sdpa_example():
    scores = _Q @ _K.T
    scaled = scores / math.sqrt(_Q.shape[1])
    keep = np.tril(np.ones((3, 3), dtype=bool))
    masked = np.where(keep, scaled, -np.inf)
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return scores, scaled, masked, weights, weights @ _V


@korean_plot
def draw_sdpa_steps(ax=None):
    """Scores, scaling, mask, row-wise softmax and the weighted sum on a 3-token example."""
    fig, ax = _canvas(ax, (-1.2, 23.4), (-1.3, 5.0), (10, 3.1))
    scores, scaled, masked, weights, out = _sdpa_example()
    cmap = plt.get_cmap("Blues")

    def shade(m, lo, hi):
        def fc(i, j):
            if not np.isfinite(m[i, j]):
                return C["blocked"]
            return cmap(0.15 + 0.6 * (m[i, j] - lo) / (hi - lo))

        return fc

    def fmt(m, spec):
        return lambda i, j: "−∞" if not np.isfinite(m[i, j]) else format(m[i, j], spec)

    steps = [
        ("1. 점수 $QK^\\top$", scores, "g", (0, scores.max())),
        ("2. $\\div\\sqrt{d_k} = 2$", scaled, ".1f", (0, scaled.max())),
        ("3. 인과적 마스크 (선택)", masked, ".1f", (0, scaled.max())),
        ("4. 소프트맥스 (행마다)", weights, ".2f", (0, 1)),
    ]
    x = 0.0
    for title, m, spec, (lo, hi) in steps:
        _cells(ax, x, 3.6, (3, 3), fc=shade(m, lo, hi), text=fmt(m, spec), fontsize=8)
        _text(ax, x + 1.5, 4.2, title, ha="center", va="center", fontsize=9)
        _arrow(ax, (x + 3.2, 2.1), (x + 4.6, 2.1))
        x += 4.8
    _cells(ax, x, 3.6, (3, 2), fc=lambda i, j: _light(C["v"], 0.6), text=fmt(out, ".2f"))
    _text(ax, x + 1.0, 4.2, "5. 가중합 $AV$", ha="center", va="center", fontsize=9)
    for i in range(3):
        _text(ax, -0.15, 3.1 - i, f"쿼리 {i}", ha="right", va="center", fontsize=7)
    notes = [
        (1.5, "쿼리마다 키와 내적"),
        (6.3, "분산을 1 근처로"),
        (11.1, "미래 키는 $-\\infty$"),
        (15.9, "행 합 = 1, $e^{-\\infty}=0$"),
        (20.2, "$(T, d_v)$ 출력"),
    ]
    for xc, note in notes:
        _text(ax, xc, 0.05, note, ha="center", va="center", fontsize=8, color="#444444")
    _text(
        ax,
        11.6,
        -0.9,
        "예: 쿼리 3개, 키 3개, $d_k = 4$, $d_v = 2$ (열 = 키, 행 = 쿼리)",
        ha="center",
        fontsize=8,
        color="#444444",
    )
    ax.set_title("스케일드 닷-프로덕트 어텐션을 단계별로", fontsize=11)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 3: masks


def _mask_panel(ax, keep, qtokens, ktokens, title, note, note_xy):
    T, S = keep.shape
    ax.set_xlim(-1.9, S + 0.2)
    ax.set_ylim(-1.0, T + 1.4)
    ax.set_aspect("equal")
    ax.set_axis_off()
    _cells(
        ax,
        0,
        T,
        (T, S),
        fc=lambda i, j: _light(C["v"], 0.55) if keep[i, j] else C["blocked"],
        text=lambda i, j: "O" if keep[i, j] else "×",
        fontsize=10,
    )
    for j, t in enumerate(ktokens):
        _text(ax, j + 0.5, T + 0.35, t, fontsize=7)
    for i, t in enumerate(qtokens):
        _text(ax, -0.15, T - i - 0.5, t, ha="right", va="center", fontsize=8)
    _text(ax, S / 2, T + 1.0, "키 (참고되는 토큰) →", ha="center", fontsize=8)
    _text(ax, -1.75, T / 2, "쿼리 →", ha="center", va="center", rotation=-90, fontsize=8)
    _text(ax, S / 2, -0.55, note, ha="center", va="center", fontsize=8, color="#444444")
    ax.set_title(title, fontsize=10, pad=4)
    return note_xy


@korean_plot
def draw_masks():
    """Causal mask and padding mask as grids of what each query may see."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 4.4))
    toks = ["나는", "오늘", "학교", "에", "간다"]
    T = len(toks)
    causal = np.tril(np.ones((T, T), dtype=bool))
    _mask_panel(
        a,
        causal,
        toks,
        toks,
        "인과적 마스크: 쿼리 i는 키 j ≤ i만",
        "O = 볼 수 있음, × = 막힘",
        None,
    )
    a.annotate(
        "미래 토큰:\n막힘",
        xy=(3.5, 3.5),
        xytext=(6.0, 4.4),
        fontsize=8,
        ha="center",
        arrowprops=dict(arrowstyle="-|>", color=C["ink"], lw=1.0),
    )
    ptoks = ["나는", "학생", "이다", "<pad>", "<pad>"]
    pad = np.ones((T, T), dtype=bool)
    pad[:, 3:] = False
    _mask_panel(
        b, pad, ptoks, ptoks, "패딩 마스크: 실제 토큰인 키만", "패딩 키의 열 전체가 막힘", None
    )
    b.add_patch(Rectangle((3, 0), 2, T, fc="none", ec=C["pos"], lw=1.8, ls="--"))
    b.add_patch(Rectangle((0, 0), T, 2, fc="none", ec="#888888", lw=1.2, ls=":"))
    _text(
        b,
        T + 0.1,
        1.0,
        "패딩 쿼리의 행:\n볼 수는 있지만\n손실에서 무시",
        ha="left",
        va="center",
        fontsize=7,
        color="#555555",
    )
    fig.suptitle("마스크는 소프트맥스 전에 막힌 점수를 아주 작은 값으로 바꿉니다", fontsize=11)
    fig.subplots_adjust(wspace=0.35)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 4: multi-head attention


@korean_plot
def draw_multihead(ax=None):
    """Project once, split d_model into h heads, attend per head, concatenate, project with W_O."""
    fig, ax = _canvas(ax, (-3.2, 14.2), (1.2, 15.4), (8, 6.6))
    h, x0, w = 4, 1.0, 2.2
    width = h * w
    mid = x0 + width / 2
    _box(ax, mid, 14.6, 5.4, 1.1, "입력 $X$ $(B, T, d_{model})$", C["emb"], fontsize=9)
    _arrow(ax, (mid, 14.05), (mid, 12.75))
    _text(ax, mid + 0.2, 13.4, "투영 $W_q, W_k, W_v$", fontsize=8, va="center", ha="left")
    for r, (key, name) in enumerate([("q", "$Q$"), ("k", "$K$"), ("v", "$V$")]):
        y = 12.0 - 1.0 * r
        for i in range(h):
            ax.add_patch(
                Rectangle(
                    (x0 + i * w, y - 0.4), w, 0.8, fc=_light(HEAD_COLORS[i], 0.55), ec="white"
                )
            )
            _text(
                ax,
                x0 + i * w + w / 2,
                y,
                f"{name[:-1]}_{i + 1}$",
                ha="center",
                va="center",
                fontsize=9,
            )
        ax.add_patch(Rectangle((x0, y - 0.4), width, 0.8, fc="none", ec=C[key], lw=1.6))
        _text(ax, x0 - 0.2, y, f"{name}\n$(B,T,d_{{model}})$", ha="right", va="center", fontsize=8)
    _text(
        ax,
        x0 + width + 0.3,
        11.0,
        "$d_{model} = h \\cdot d_{head}$\n열을 헤드 $h$개로\n나누기 (view)",
        fontsize=8,
        ha="left",
    )
    for i in range(h):
        xc = x0 + i * w + w / 2
        _arrow(ax, (xc, 9.6), (xc, 8.7), color=HEAD_COLORS[i])
        _box(ax, xc, 8.0, w - 0.3, 1.3, f"헤드 {i + 1}\n어텐션", HEAD_COLORS[i], fontsize=8)
        _arrow(ax, (xc, 7.35), (xc, 6.45), color=HEAD_COLORS[i])
        ax.add_patch(
            Rectangle((x0 + i * w, 5.65), w, 0.8, fc=_light(HEAD_COLORS[i], 0.55), ec="white")
        )
        _text(ax, xc, 6.05, f"$Z_{i + 1}$", ha="center", va="center", fontsize=9)
    _text(
        ax,
        x0 - 0.2,
        8.0,
        "$(B, h, T, d_{head})$\n헤드 축은\n배치처럼 계산",
        ha="right",
        va="center",
        fontsize=8,
    )
    ax.add_patch(Rectangle((x0, 5.65), width, 0.8, fc="none", ec=C["ink"], lw=1.4))
    _text(
        ax,
        x0 - 0.2,
        6.05,
        "이어 붙이기\n$(B, T, h \\cdot d_{head})$",
        ha="right",
        va="center",
        fontsize=8,
    )
    _arrow(ax, (mid, 5.6), (mid, 4.6))
    _box(
        ax,
        mid,
        4.0,
        7.2,
        1.1,
        "출력 투영 $W^O$: $h \\cdot d_{head} \\to d_{model}$",
        C["attn"],
        fontsize=9,
    )
    _arrow(ax, (mid, 3.45), (mid, 2.55))
    _box(ax, mid, 2.0, 5.4, 1.1, "출력 $(B, T, d_{model})$", C["emb"], fontsize=9)
    _text(
        ax,
        x0 + width + 0.3,
        4.0,
        "$W^O$가 헤드들의\n결과를 섞습니다",
        fontsize=8,
        ha="left",
        va="center",
        color="#444444",
    )
    ax.set_title("멀티헤드 어텐션: 나누기 → 헤드별 어텐션 → 이어 붙이기 → 출력 투영", fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 5: positional information


@korean_plot
def draw_positional_entry():
    """Absolute encodings are added once to the input; RoPE rotates q and k in every layer."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 5.2))
    for ax in (a, b):
        ax.set_xlim(0, 10)
        ax.set_ylim(0, 11)
        ax.set_aspect("equal")
        ax.set_axis_off()
    # (a) added to the embeddings
    _box(a, 5, 0.7, 4.0, 0.9, "토큰 $x_0, x_1, \\dots$", C["emb"], fontsize=9)
    _arrow(a, (5, 1.15), (5, 2.0))
    _box(a, 3.4, 2.6, 3.2, 1.1, "토큰 임베딩", C["emb"], fontsize=9)
    _box(a, 7.6, 2.6, 3.2, 1.1, "위치 인코딩 $p_m$\n(사인파 또는 학습됨)", C["pos"], fontsize=8)
    _plus(a, 5, 4.1)
    _arrow(a, (3.4, 3.15), (4.8, 3.95))
    _arrow(a, (7.6, 3.15), (5.2, 3.95), color=C["pos"])
    _arrow(a, (5, 4.32), (5, 5.2))
    _frame(a, 1.5, 5.2, 7, 4.2)
    _text(a, 8.35, 9.1, "$N\\times$", ha="right", fontsize=9)
    _box(a, 5, 6.2, 5.0, 1.0, "$W_q, W_k, W_v$ (위치 정보가 섞인 입력)", C["attn"], fontsize=8)
    _box(a, 5, 7.9, 5.0, 1.0, "어텐션 + 피드포워드 네트워크", C["attn"], fontsize=9)
    _arrow(a, (5, 6.7), (5, 7.4))
    _arrow(a, (5, 9.4), (5, 10.1))
    _text(
        a,
        5,
        10.45,
        "위치는 입력에서 한 번 더해지고\n쿼리·키·값과 잔차 경로 모두에 섞입니다",
        ha="center",
        va="center",
        fontsize=8,
    )
    a.set_title("(가) 더하기: 사인파·학습된 위치 임베딩", fontsize=10)
    # (b) RoPE
    _box(b, 5, 0.7, 4.0, 0.9, "토큰 $x_0, x_1, \\dots$", C["emb"], fontsize=9)
    _arrow(b, (5, 1.15), (5, 2.0))
    _box(b, 5, 2.6, 3.6, 1.1, "토큰 임베딩 (위치 없음)", C["emb"], fontsize=9)
    _arrow(b, (5, 3.15), (5, 4.0))
    _frame(b, 0.6, 4.0, 8.8, 5.4)
    _text(b, 9.25, 9.1, "$N\\times$", ha="right", fontsize=9)
    for key, x in (("q", 2.2), ("k", 5.0), ("v", 7.8)):
        _box(b, x, 4.8, 2.0, 0.8, f"$W_{key}$", C[key], fontsize=9)
    for key, x in (("q", 2.2), ("k", 5.0)):
        _arrow(b, (x, 5.2), (x, 5.75), color=C[key])
        _box(b, x, 6.35, 2.2, 1.1, f"회전 $R(m\\theta)$\n위치 $m$의 ${key}$", C["pos"], fontsize=8)
        _arrow(b, (x, 6.9), (x, 7.65), color=C[key])
    _arrow(b, (7.8, 5.2), (7.8, 7.65), color=C["v"])
    _text(b, 7.95, 6.35, "값은\n회전 안 함", fontsize=8, va="center", ha="left", color=C["v"])
    _box(
        b,
        5,
        8.3,
        7.8,
        1.1,
        "어텐션: 점수 $q_m^\\top k_n$은 $n - m$에만 의존",
        C["attn"],
        fontsize=9,
    )
    _arrow(b, (5, 9.4), (5, 10.1))
    _text(
        b,
        5,
        10.45,
        "모든 층, 모든 헤드에서\n쿼리와 키에만 적용합니다",
        ha="center",
        va="center",
        fontsize=8,
    )
    b.set_title("(나) 회전: 회전 위치 임베딩(RoPE)", fontsize=10)
    fig.suptitle("위치 정보가 모델에 들어가는 곳", fontsize=11)
    return fig


@korean_plot
def draw_rope_rotation():
    """RoPE turns each 2-D pair by m*theta_i; shifting both positions keeps the angle of q and k."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.6), gridspec_kw={"width_ratios": [1.35, 1]})
    d, m = 8, 3
    # (a) the pairs of one query vector and their angles at position m
    a.set_xlim(-0.5, 10.5)
    a.set_ylim(-1.3, 5.2)
    a.set_aspect("equal")
    a.set_axis_off()
    cw = 1.0
    x0 = 5.25 - d * cw / 2
    for j in range(d):
        a.add_patch(
            Rectangle((x0 + j * cw, 3.7), cw, 0.8, fc=_light(HEAD_COLORS[j // 2], 0.5), ec="white")
        )
        _text(a, x0 + j * cw + cw / 2, 4.1, f"$x_{j}$", ha="center", va="center", fontsize=9)
    _text(
        a,
        5.25,
        4.85,
        f"$d_{{head}} = {d}$ → 2차원 짝 {d // 2}개 $(x_{{2i}}, x_{{2i+1}})$",
        ha="center",
        fontsize=9,
    )
    for i in range(d // 2):
        theta = 10000 ** (-2 * i / d)
        cx, cy, r = 1.35 + i * 2.6, 1.4, 0.95
        a.plot([x0 + (2 * i + 1) * cw, cx], [3.7, cy + r + 0.1], color="#aaaaaa", lw=0.8)
        a.add_patch(Circle((cx, cy), r, fc="none", ec="#cccccc", lw=0.8))
        _arrow(a, (cx, cy), (cx + r, cy), color="#999999", lw=1.0)
        ang = m * theta
        _arrow(
            a,
            (cx, cy),
            (cx + r * math.cos(ang), cy + r * math.sin(ang)),
            color=HEAD_COLORS[i],
            lw=1.8,
        )
        _text(
            a,
            cx,
            cy - r - 0.35,
            f"짝 {i}: $\\theta_{i}$ = {theta:g}\n각도 {m}·$\\theta_{i}$ = {ang:.3g}",
            ha="center",
            va="top",
            fontsize=7,
        )
    a.set_title(f"(가) 위치 m = {m}: 짝 i를 m·θᵢ만큼 회전", fontsize=10)
    # (b) relative position: shifting m and n together keeps the angle
    b.set_xlim(-1.25, 1.25)
    b.set_ylim(-1.25, 1.35)
    b.set_aspect("equal")
    b.set_axis_off()
    b.add_patch(Circle((0, 0), 1.0, fc="none", ec="#dddddd", lw=0.8))
    theta, q0, k0 = 0.3, 0.2, 0.9
    for (mm, nn), ls, alpha in (((2, 5), "-", 1.0), ((5, 8), "--", 0.85)):
        aq, ak = q0 + mm * theta, k0 + nn * theta
        b.annotate(
            "",
            xy=(math.cos(aq), math.sin(aq)),
            xytext=(0, 0),
            arrowprops=dict(arrowstyle="-|>", color=C["q"], lw=1.8, ls=ls, alpha=alpha),
        )
        b.annotate(
            "",
            xy=(0.8 * math.cos(ak), 0.8 * math.sin(ak)),
            xytext=(0, 0),
            arrowprops=dict(arrowstyle="-|>", color=C["k"], lw=1.8, ls=ls, alpha=alpha),
        )
        _text(
            b,
            1.12 * math.cos(aq),
            1.12 * math.sin(aq),
            f"$q_{mm}$",
            ha="center",
            va="center",
            fontsize=9,
            color=C["q"],
        )
        _text(
            b,
            0.94 * math.cos(ak),
            0.94 * math.sin(ak),
            f"$k_{nn}$",
            ha="center",
            va="center",
            fontsize=9,
            color=C["k"],
        )
        arc = np.linspace(aq, ak, 30)
        rad = 0.35 if mm == 2 else 0.5
        b.plot(rad * np.cos(arc), rad * np.sin(arc), color="#555555", lw=1.0, ls=ls)
    _text(
        b,
        0,
        -1.2,
        "$m, n$을 함께 3칸 옮겨도 두 벡터 사이의 각도는 같습니다\n"
        "→ 내적 $q_m^\\top k_n$은 $n - m$에만 의존",
        ha="center",
        va="center",
        fontsize=8,
    )
    b.set_title("(나) 상대 위치: (m, n) = (2, 5)와 (5, 8)", fontsize=10)
    fig.suptitle("회전 위치 임베딩: 2차원 짝마다 위치에 비례하는 회전", fontsize=11)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 6: where the normalization sits


@korean_plot
def draw_pre_post_norm():
    """Post-norm puts LayerNorm on the residual path; pre-norm moves it onto the branch."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 6.2))
    specs = [
        (
            "사후 정규화 (post-norm)\n$x \\leftarrow \\mathrm{LN}(x + \\mathrm{Sub}(x))$",
            ["attn", "add", "ln_main", "ffn", "add", "ln_main"],
            "원래 트랜스포머, BERT\n출력이 이미 정규화됨",
        ),
        (
            "사전 정규화 (pre-norm)\n$x \\leftarrow x + \\mathrm{Sub}(\\mathrm{LN}(x))$",
            ["ln_attn", "add", "ln_ffn", "add", "final"],
            "GPT-2, LLaMA 등\n입력→출력 잔차 경로에 변환 없음",
        ),
    ]
    for ax, (title, plan, note) in zip(axes, specs, strict=True):
        ax.set_xlim(-0.5, 7.5)
        ax.set_ylim(-1.3, 10.6)
        ax.set_aspect("equal")
        ax.set_axis_off()
        xm, xs = 1.6, 5.0
        y = 0.0
        _text(ax, xm, y, "입력 $x$", ha="center", va="center", fontsize=9)
        y_prev = y + 0.25
        for step in plan:
            if step in ("attn", "ffn", "ln_attn", "ln_ffn"):
                # sub-layer on the side branch; residual continues on the main line
                y_fork = y_prev + 0.35
                ax.plot([xm, xm], [y_prev, y_fork], color=C["res"], lw=2.2)
                ybox = y_fork + 0.9
                if step.startswith("ln_"):
                    _path(ax, [(xm, y_fork), (xs, y_fork), (xs, ybox - 0.4)])
                    _box(ax, xs, ybox, 2.8, 0.8, "층 정규화", C["norm"], fontsize=8)
                    _arrow(ax, (xs, ybox + 0.4), (xs, ybox + 0.8))
                    ybox += 1.2
                else:
                    _path(ax, [(xm, y_fork), (xs, y_fork), (xs, ybox - 0.4)])
                sub = "셀프 어텐션" if step in ("attn", "ln_attn") else "피드포워드 네트워크"
                _box(
                    ax,
                    xs,
                    ybox,
                    2.8,
                    0.8,
                    sub,
                    C["attn"] if "attn" in step else C["ffn"],
                    fontsize=8,
                )
                y_add = ybox + 0.9
                _plus(ax, xm, y_add)
                _path(ax, [(xs, ybox + 0.4), (xs, y_add), (xm + 0.22, y_add)])
                _arrow(ax, (xm, y_fork), (xm, y_add - 0.22), color=C["res"], lw=2.2)
                y_prev = y_add + 0.22
            elif step == "add":
                continue
            else:
                label = "층 정규화" if step == "ln_main" else "최종 층 정규화\n(스택 끝에 한 번)"
                yb = y_prev + 0.75
                _arrow(ax, (xm, y_prev), (xm, yb - 0.4), color=C["res"], lw=2.2)
                _box(
                    ax, xm, yb, 2.6, 0.8 if step == "ln_main" else 1.0, label, C["norm"], fontsize=8
                )
                y_prev = yb + (0.4 if step == "ln_main" else 0.5)
                if step == "final":
                    ax.plot(
                        [
                            xm - 1.5,
                            xm + 1.5,
                        ],
                        [yb - 0.75, yb - 0.75],
                        color="#999999",
                        lw=0.8,
                        ls=":",
                    )
        _arrow(ax, (xm, y_prev), (xm, y_prev + 0.5), color=C["res"], lw=2.2)
        _text(ax, xm, y_prev + 0.8, "출력", ha="center", va="center", fontsize=9)
        _text(ax, xs, -0.6, note, ha="center", va="center", fontsize=8, color="#444444")
        head, formula = title.split("\n")
        ax.set_title(head, fontsize=10)
        _text(ax, 3.5, 10.3, formula, fontsize=9)
    fig.text(
        0.5,
        0.02,
        "굵은 빨간 선 = 잔차 연결의 경로, ⊕ = 더하기 (Add), 노란 상자 = 층 정규화 (Norm)",
        ha="center",
        fontsize=8,
    )
    fig.suptitle("잔차 연결과 층 정규화의 두 가지 배치 (Add & Norm)", fontsize=11)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 7: efficient attention


@korean_plot
def draw_kv_cache(ax=None):
    """Each decoding step computes q, k, v of the new token only and reads the cached k/v."""
    fig, ax = _canvas(ax, (-4.6, 12.4), (-1.2, 9.4), (10, 5.6))
    rows = [("프롬프트", 0, 3), ("스텝 1", 3, 4), ("스텝 2", 4, 5), ("스텝 3", 5, 6)]
    S = 6
    for r, (name, start, end) in enumerate(rows):
        y = 8.0 - 2.2 * r
        _text(ax, -4.4, y, name, ha="left", va="center", fontsize=9)
        nq = end - start
        qtxt = "$q_0, q_1, q_2$" if nq > 1 else f"$q_{start}$"
        _box(ax, -1.7, y, 1.6, 0.8, qtxt, C["q"], fontsize=8)
        _text(ax, -1.7, y - 0.65, f"쿼리 {nq}개", ha="center", fontsize=7, color=C["q"])
        _arrow(ax, (-0.9, y), (-0.1, y), color=C["q"])
        for j in range(S):
            for y_cell, key in ((y, "k"), (y - 0.55, "v")):
                if j < start:
                    fc, ec, txt = _light(C[key], 0.6), C[key], f"${key}_{j}$"
                elif j < end:
                    fc, ec, txt = C[key], C[key], f"${key}_{j}$"
                else:
                    fc, ec, txt = "white", "#cccccc", ""
                ax.add_patch(Rectangle((j, y_cell), 1, 0.55, fc=fc, ec=ec, lw=0.8))
                if txt:
                    white = start <= j < end
                    _text(
                        ax,
                        j + 0.5,
                        y_cell + 0.275,
                        txt,
                        fontsize=8,
                        color="white" if white else C["ink"],
                    )
        if r == 0:
            _text(
                ax, S / 2, y + 0.85, "층마다의 KV 캐시 (위: 키, 아래: 값)", ha="center", fontsize=8
            )
        _arrow(ax, (S + 0.1, y), (S + 0.9, y))
        new = (
            "새 토큰의 $k, v$ 3개를 저장"
            if r == 0
            else f"새 $k_{start}, v_{start}$만 계산해 추가,\n캐시 {start}개는 다시 읽기만"
        )
        _text(ax, S + 1.1, y, new, ha="left", va="center", fontsize=8)
        if r < len(rows) - 1:
            _arrow(ax, (-1.7, y - 0.95), (-1.7, y - 1.75), color="#888888", rad=0.0)
            _text(
                ax,
                -1.55,
                y - 1.35,
                f"생성된 토큰 {end}을 입력으로",
                ha="left",
                va="center",
                fontsize=7,
                color="#666666",
            )
    _text(
        ax,
        3.5,
        -0.9,
        "진한 칸 = 이번 스텝에 새로 계산, 연한 칸 = 캐시에서 읽음, 빈 칸 = 아직 없음",
        ha="center",
        fontsize=8,
        color="#444444",
    )
    ax.set_title("KV 캐시: 디코딩 스텝마다 새 토큰의 키·값만 계산해 이어 붙입니다", fontsize=11)
    return fig


@korean_plot
def draw_sliding_global():
    """Keys a query sees under a causal window, and under a bidirectional window + global token."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.4, 4.6))
    T, w = 8, 3
    i_idx, j_idx = np.indices((T, T))
    causal_win = (j_idx <= i_idx) & (j_idx > i_idx - w)
    band = np.abs(i_idx - j_idx) < w
    glob = (i_idx == 0) | (j_idx == 0)
    for ax in (a, b):
        ax.set_xlim(-1.6, T + 3.8)
        ax.set_ylim(-1.5, T + 1.5)
        ax.set_aspect("equal")
        ax.set_axis_off()
        for j in range(T):
            _text(ax, j + 0.5, T + 0.2, str(j), ha="center", va="bottom", fontsize=8)
            _text(ax, -0.2, T - j - 0.5, str(j), ha="right", va="center", fontsize=8)
        _text(ax, T / 2, T + 1.05, "키 $j$", ha="center", fontsize=8)
        _text(ax, -1.2, T / 2, "쿼리 $i$", ha="center", va="center", rotation=90, fontsize=8)
    _cells(
        a, 0, T, (T, T), fc=lambda i, j: _light(C["q"], 0.35) if causal_win[i, j] else C["blocked"]
    )
    i = 5
    a.add_patch(Rectangle((0, T - i - 1), T, 1, fc="none", ec=C["pos"], lw=1.8))
    a.annotate(
        f"쿼리 {i}: 키 {i - w + 1}, {i - 1}, {i}만\n(i − w < j ≤ i)",
        xy=(T, T - i - 0.5),
        xytext=(T + 0.3, T - i - 2.3),
        fontsize=8,
        arrowprops=dict(arrowstyle="-|>", lw=1.0, color=C["ink"]),
    )
    _text(a, T / 2, -0.7, "자신과 앞의 $w - 1$개 토큰", ha="center", fontsize=8, color="#444444")
    a.set_title(f"(가) 인과적 윈도 (w = {w}, Mistral 방식)", fontsize=10)

    def fc(i, j):
        if glob[i, j]:
            return _light(C["k"], 0.3)
        return _light(C["q"], 0.35) if band[i, j] else C["blocked"]

    _cells(b, 0, T, (T, T), fc=fc)
    b.annotate(
        "전역 토큰 0의 행:\n모든 키를 봅니다",
        xy=(T, T - 0.5),
        xytext=(T + 0.3, T - 1.4),
        fontsize=8,
        arrowprops=dict(arrowstyle="-|>", lw=1.0, color=C["ink"]),
    )
    b.annotate(
        "전역 토큰 0의 열:\n모든 쿼리가 봅니다",
        xy=(0.5, 0),
        xytext=(T + 0.3, 1.0),
        fontsize=8,
        arrowprops=dict(arrowstyle="-|>", lw=1.0, color=C["ink"], connectionstyle="arc3,rad=0.25"),
    )
    _text(
        b,
        T / 2,
        -0.7,
        "띠: $|i - j| < w$ (양쪽으로 $w - 1$개)",
        ha="center",
        fontsize=8,
        color="#444444",
    )
    b.set_title(f"(나) 양방향 윈도 w = {w} + 전역 토큰 (Longformer 방식)", fontsize=10)
    fig.suptitle(
        "슬라이딩 윈도 어텐션과 전역 토큰: 칸 = 볼 수 있는 (쿼리, 키) 쌍, 회색 = 막힘", fontsize=11
    )
    return fig


def _online_softmax_example():
    """Running max and sum over the chapter's two key blocks of scores."""
    s = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    m, ell, states = -np.inf, 0.0, []
    for block in (s[:4], s[4:]):
        m_new = max(m, block.max())
        ell = ell * math.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
        states.append((block, m, ell))
    return s, states


@korean_plot
def draw_flash_tiling(ax=None):
    """Q blocks against K/V blocks; a query block keeps (m, l, O) and visits the key blocks."""
    fig, ax = _canvas(ax, (-2.6, 17.4), (-4.4, 8.4), (10.5, 6.6))
    nb, bs = 3, 2.0
    top = 6.0
    for j in range(nb):
        _box(
            ax,
            j * bs + bs / 2,
            top + 1.1,
            bs - 0.15,
            0.7,
            f"$K_{j + 1}, V_{j + 1}$",
            C["k"],
            fontsize=8,
        )
    for i in range(nb):
        _box(ax, -1.2, top - i * bs - bs / 2, 1.3, bs - 0.15, f"$Q_{i + 1}$", C["q"], fontsize=9)
    for i in range(nb):
        for j in range(nb):
            active = i == 1
            current = i == 1 and j == 1
            fc = (
                _light(C["attn"], 0.25)
                if current
                else (_light(C["attn"], 0.7) if active else "#f2f2f2")
            )
            ax.add_patch(Rectangle((j * bs, top - (i + 1) * bs), bs, bs, fc=fc, ec="white", lw=2))
            _text(
                ax,
                j * bs + bs / 2,
                top - i * bs - bs / 2,
                f"$S_{{{i + 1}{j + 1}}}$",
                ha="center",
                va="center",
                fontsize=9,
            )
    for j in range(nb - 1):
        _arrow(
            ax,
            (j * bs + bs * 0.8, top - bs * 1.5 - 0.55),
            (j * bs + bs * 1.2, top - bs * 1.5 - 0.55),
            color=C["pos"],
            lw=1.6,
        )
    _text(
        ax,
        nb * bs / 2,
        top - nb * bs - 0.45,
        "점수 행렬 $S = QK^\\top$ 전체는 만들지 않습니다\n(한 번에 타일 하나만 SRAM에)",
        ha="center",
        va="top",
        fontsize=8,
    )
    x_eq = 7.2
    _text(
        ax,
        x_eq,
        7.4,
        "쿼리 블록 $Q_2$가 키 블록을 차례로 돌며\n행마다 세 값 $(m, \\ell, O)$를 갱신합니다",
        fontsize=9,
        va="center",
        ha="left",
    )
    eqs = [
        "$m' = \\max(m, \\mathrm{rowmax}(S_{2j}))$   지금까지의 최댓값",
        "$\\ell' = \\ell\\, e^{m - m'} + \\mathrm{rowsum}(e^{S_{2j} - m'})$   합",
        "$O' = O\\, e^{m - m'} + e^{S_{2j} - m'}\\, V_j$   출력 누적",
        "마지막 블록 뒤: 출력 $= O / \\ell$",
    ]
    for r, eq in enumerate(eqs):
        _text(ax, x_eq, 5.9 - 0.85 * r, eq, fontsize=9, va="center", ha="left")
    _text(
        ax,
        x_eq,
        2.1,
        "최댓값이 바뀌면 이전 누적값에 $e^{m - m'}$를 곱해 다시 맞춥니다",
        fontsize=8,
        color="#444444",
        va="center",
        ha="left",
    )
    s, states = _online_softmax_example()
    y = -2.6
    _text(
        ax, -2.4, y + 0.9, "한 행의 예: 점수 8개를 블록 2개로", fontsize=8, va="center", ha="left"
    )
    for b, (block, m, ell) in enumerate(states):
        xb = -2.4 + b * 7.4
        _text(
            ax,
            xb,
            y,
            f"블록 {b + 1}: {block.astype(int).tolist()}",
            fontsize=8,
            va="center",
            ha="left",
        )
        _text(
            ax,
            xb,
            y - 0.7,
            f"→ $m$ = {m:g},  $\\ell$ = {ell:.4f}",
            fontsize=8,
            va="center",
            ha="left",
        )
        if b == 0:
            _arrow(ax, (xb + 5.3, y - 0.35), (xb + 6.9, y - 0.35), color=C["pos"])
    lse = states[-1][1] + math.log(states[-1][2])
    _text(
        ax,
        12.6,
        y - 0.35,
        f"$m + \\log\\ell$ = {lse:.4f}\n= logsumexp(전체)",
        fontsize=8,
        va="center",
        ha="left",
    )
    ax.set_title("FlashAttention의 타일링과 온라인 소프트맥스", fontsize=11)
    return fig


@korean_plot
def draw_head_sharing():
    """Query heads and the key/value heads they read under MHA, GQA and MQA (h = 8)."""
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.3))
    h = 8
    for ax, (name, h_kv) in zip(
        axes,
        (("멀티헤드 어텐션 (MHA)", 8), ("그룹 쿼리 어텐션 (GQA)", 2), ("멀티쿼리 어텐션 (MQA)", 1)),
        strict=True,
    ):
        ax.set_xlim(-0.3, 8.3)
        ax.set_ylim(-1.6, 3.6)
        ax.set_aspect("equal")
        ax.set_axis_off()
        group = h // h_kv
        kv_x = [g * group + group / 2 for g in range(h_kv)]
        for i in range(h):
            g = i // group
            col = HEAD_COLORS[g % len(HEAD_COLORS)]
            ax.add_patch(Rectangle((i + 0.1, 2.2), 0.8, 0.8, fc=_light(col, 0.45), ec=col))
            _text(ax, i + 0.5, 2.6, f"$q_{i + 1}$", ha="center", va="center", fontsize=8)
            ax.plot([i + 0.5, kv_x[g]], [2.2, 0.8], color=col, lw=1.0)
        for g, x in enumerate(kv_x):
            col = HEAD_COLORS[g % len(HEAD_COLORS)]
            wdt = min(0.9, group * 0.9)
            ax.add_patch(Rectangle((x - wdt / 2, 0.0), wdt, 0.8, fc=col, ec=col))
            _text(ax, x, 0.4, "$k,v$", ha="center", va="center", fontsize=7, color="white")
        _text(ax, 4, 3.3, "쿼리 헤드 8개", ha="center", fontsize=8)
        _text(ax, 4, -0.5, f"키·값 헤드 $h_{{kv}}$ = {h_kv}", ha="center", fontsize=8)
        _text(
            ax, 4, -1.2, f"KV 캐시 크기: MHA의 {h_kv}/{h}", ha="center", fontsize=8, color=C["pos"]
        )
        ax.set_title(name, fontsize=10)
    fig.suptitle("쿼리 헤드가 키·값 헤드를 나눠 쓰는 방식", fontsize=11)
    return fig


# ---------------------------------------------------------------------------------------------
# Chapter 8: the Transformer


def _frame(ax, x0, y0, w, h, fc="none", rounding=0.2):
    """The dashed frame around the layers that repeat N times."""
    ax.add_patch(
        FancyBboxPatch(
            (x0, y0),
            w,
            h,
            boxstyle=f"round,pad=0,rounding_size={rounding}",
            fc=fc,
            ec="#999999",
            ls="--",
        )
    )


def _stack_frame(ax, x, y0, y1, w, label):
    _frame(ax, x - w / 2, y0, w, y1 - y0, fc="#fafafa", rounding=0.25)
    _text(ax, x - w / 2 - 0.15, (y0 + y1) / 2, label, ha="right", va="center", fontsize=9)


def _residual(ax, x, w, y_from, y_to):
    """Residual connection on the right of a column: from below a sub-layer to its Add & Norm."""
    xr = x + w / 2 + 0.35
    _path(ax, [(x, y_from), (xr, y_from), (xr, y_to), (x + w / 2, y_to)], color=C["res"], lw=1.1)


@korean_plot
def draw_transformer_encoder_decoder(ax=None):
    """The original encoder-decoder Transformer (post-norm), with cross-attention."""
    fig, ax = _canvas(ax, (-0.6, 12.6), (-0.4, 13.4), (7.6, 8.4))
    w = 3.8
    xe, xd = 2.9, 8.9
    # encoder
    _text(ax, xe, 0.0, "원문 토큰", ha="center", fontsize=9)
    _arrow(ax, (xe, 0.3), (xe, 0.75))
    _box(ax, xe, 1.15, w, 0.8, "입력 임베딩", C["emb"], fontsize=9)
    _plus(ax, xe, 2.2)
    _arrow(ax, (xe, 1.55), (xe, 1.98))
    _text(ax, xe - 0.35, 2.2, "위치 인코딩", ha="right", va="center", fontsize=8, color=C["pos"])
    _arrow(ax, (xe, 2.42), (xe, 3.05))
    _stack_frame(ax, xe, 2.85, 7.35, w + 1.2, "$N\\times$")
    enc = [
        (3.6, "멀티헤드 셀프 어텐션\n(양방향, 패딩 마스크)", C["attn"]),
        (4.75, "더하기 & 층 정규화", C["norm"]),
        (5.75, "피드포워드 네트워크", C["ffn"]),
        (6.8, "더하기 & 층 정규화", C["norm"]),
    ]
    for i, (y, label, col) in enumerate(enc):
        hgt = 0.9 if i == 0 else 0.6
        _box(ax, xe, y, w, hgt, label, col, fontsize=8)
        if i:
            prev_y, prev_h = enc[i - 1][0], 0.9 if i == 1 else 0.6
            _arrow(ax, (xe, prev_y + prev_h / 2), (xe, y - hgt / 2))
    _residual(ax, xe, w, 3.05, 4.75)
    _residual(ax, xe, w, 5.25, 6.8)
    _text(ax, xe, 7.75, "인코더 출력 (memory)", ha="center", fontsize=8)
    _arrow(ax, (xe, 7.1), (xe, 7.6))
    # decoder
    _text(ax, xd, 0.0, "대상 토큰 (오른쪽으로 한 칸 밀기)", ha="center", fontsize=9)
    _arrow(ax, (xd, 0.3), (xd, 0.75))
    _box(ax, xd, 1.15, w, 0.8, "출력 임베딩", C["emb"], fontsize=9)
    _plus(ax, xd, 2.2)
    _arrow(ax, (xd, 1.55), (xd, 1.98))
    _text(ax, xd + 0.35, 2.2, "위치 인코딩", ha="left", va="center", fontsize=8, color=C["pos"])
    _arrow(ax, (xd, 2.42), (xd, 3.05))
    _stack_frame(ax, xd, 2.85, 10.1, w + 1.2, "")
    _text(ax, xd + (w + 1.2) / 2 + 0.15, 6.5, "$N\\times$", ha="left", va="center", fontsize=9)
    dec = [
        (3.6, "마스크된 멀티헤드 셀프 어텐션\n(인과적 마스크)", C["attn"]),
        (4.75, "더하기 & 층 정규화", C["norm"]),
        (5.9, "크로스 어텐션\n(쿼리: 디코더, 키·값: 인코더)", C["attn"]),
        (7.05, "더하기 & 층 정규화", C["norm"]),
        (8.05, "피드포워드 네트워크", C["ffn"]),
        (9.1, "더하기 & 층 정규화", C["norm"]),
    ]
    for i, (y, label, col) in enumerate(dec):
        hgt = 0.9 if i in (0, 2) else 0.6
        _box(ax, xd, y, w, hgt, label, col, fontsize=8)
        if i:
            prev_y, prev_h = dec[i - 1][0], 0.9 if i - 1 in (0, 2) else 0.6
            _arrow(ax, (xd, prev_y + prev_h / 2), (xd, y - hgt / 2))
    _residual(ax, xd, w, 3.05, 4.75)
    _residual(ax, xd, w, 5.25, 7.05)
    _residual(ax, xd, w, 7.55, 9.1)
    _path(
        ax,
        [(xe, 8.0), (xe, 8.5), (5.55, 8.5), (5.55, 5.9), (xd - w / 2, 5.9)],
        color=C["k"],
        lw=1.6,
    )
    _text(ax, 5.7, 6.15, "키·값", ha="left", fontsize=8, color=C["k"])
    _arrow(ax, (xd, 9.4), (xd, 10.45))
    _box(ax, xd, 10.8, w, 0.7, "선형 (어휘 크기로)", C["emb"], fontsize=8)
    _arrow(ax, (xd, 11.15), (xd, 11.5))
    _box(ax, xd, 11.85, w, 0.7, "소프트맥스", C["emb"], fontsize=8)
    _arrow(ax, (xd, 12.2), (xd, 12.6))
    _text(ax, xd, 12.85, "다음 토큰의 확률", ha="center", fontsize=9)
    _text(ax, xe, 12.0, "인코더", ha="center", fontsize=11)
    _text(ax, xd - 2.6, 12.0, "디코더", ha="center", fontsize=11)
    _text(
        ax,
        xe,
        10.9,
        "빨간 선 = 잔차 연결\n(원래 트랜스포머는 사후 정규화)",
        ha="center",
        fontsize=8,
        color=C["res"],
    )
    ax.set_title("인코더-디코더 트랜스포머", fontsize=11)
    return fig


@korean_plot
def draw_transformer_decoder_only(ax=None):
    """A GPT-style decoder-only model (pre-norm blocks, learned positions, final norm, LM head)."""
    fig, ax = _canvas(ax, (-1.4, 12.4), (-0.5, 12.9), (7.0, 6.6))
    x, w = 4.2, 4.2
    _text(ax, x, 0.0, "토큰 $(B, T)$", ha="center", fontsize=9)
    _arrow(ax, (x - 1.1, 0.3), (x - 1.1, 0.8))
    _arrow(ax, (x + 1.1, 0.3), (x + 1.1, 0.8))
    _box(ax, x - 1.1, 1.2, 2.0, 0.8, "토큰 임베딩", C["emb"], fontsize=8)
    _box(ax, x + 1.1, 1.2, 2.0, 0.8, "위치 임베딩\n(학습됨)", C["pos"], fontsize=8)
    _plus(ax, x, 2.2)
    _arrow(ax, (x - 1.1, 1.6), (x - 0.2, 2.05))
    _arrow(ax, (x + 1.1, 1.6), (x + 0.2, 2.05), color=C["pos"])
    _stack_frame(ax, x, 2.75, 8.25, w + 1.6, "$N\\times$")
    _arrow(ax, (x, 2.42), (x, 3.2))
    ys = {"ln1": 3.55, "attn": 4.6, "add1": 5.55, "ln2": 6.05, "ffn": 6.95, "add2": 7.85}
    _box(ax, x, ys["ln1"], w, 0.6, "층 정규화", C["norm"], fontsize=8)
    _box(
        ax,
        x,
        ys["attn"],
        w,
        0.95,
        "마스크된 멀티헤드 셀프 어텐션\n(인과적 마스크)",
        C["attn"],
        fontsize=8,
    )
    _arrow(ax, (x, ys["ln1"] + 0.3), (x, ys["attn"] - 0.475))
    _plus(ax, x, ys["add1"], r=0.2)
    _arrow(ax, (x, ys["attn"] + 0.475), (x, ys["add1"] - 0.2))
    _box(ax, x, ys["ln2"] + 0.05, w, 0.5, "층 정규화", C["norm"], fontsize=8)
    _box(ax, x, ys["ffn"], w, 0.7, "피드포워드 네트워크", C["ffn"], fontsize=8)
    _arrow(ax, (x, ys["ln2"] + 0.3), (x, ys["ffn"] - 0.35))
    _plus(ax, x, ys["add2"], r=0.2)
    _arrow(ax, (x, ys["ffn"] + 0.35), (x, ys["add2"] - 0.2))
    xr = x + w / 2 + 0.4
    _path(
        ax, [(x, 3.05), (xr, 3.05), (xr, ys["add1"]), (x + 0.2, ys["add1"])], color=C["res"], lw=1.4
    )
    _path(
        ax,
        [(x, ys["add1"] + 0.2), (x, 5.72), (xr, 5.72), (xr, ys["add2"]), (x + 0.2, ys["add2"])],
        color=C["res"],
        lw=1.4,
    )
    _arrow(ax, (x, ys["add2"] + 0.2), (x, 8.75))
    _box(ax, x, 9.1, w, 0.7, "최종 층 정규화", C["norm"], fontsize=8)
    _arrow(ax, (x, 9.45), (x, 9.95))
    _box(ax, x, 10.3, w, 0.7, "출력층: 선형 $d_{model} \\to |\\mathcal{V}|$", C["emb"], fontsize=8)
    _arrow(ax, (x, 10.65), (x, 11.15))
    _text(ax, x, 11.5, "로짓 $(B, T, |\\mathcal{V}|)$: 위치마다 다음 토큰", ha="center", fontsize=9)
    _text(
        ax,
        x + w / 2 + 0.9,
        4.6,
        "인코더도 크로스\n어텐션도 없음\n\n위치 $t$의 로짓은\n$t$ 이후 토큰과\n무관합니다",
        ha="left",
        va="center",
        fontsize=8,
        color="#444444",
    )
    _text(ax, 0.1, 7.6, "GPT 블록\n(사전 정규화)", ha="center", fontsize=8, color="#444444")
    ax.set_title("디코더 전용 트랜스포머 (GPT 계열)", fontsize=11)
    return fig


# The conceptual diagrams in book order (tests/book/test_diagrams.py draws every one).
DIAGRAMS = [
    draw_qkv_flow,
    draw_sdpa_steps,
    draw_masks,
    draw_multihead,
    draw_positional_entry,
    draw_rope_rotation,
    draw_pre_post_norm,
    draw_sliding_global,
    draw_kv_cache,
    draw_head_sharing,
    draw_flash_tiling,
    draw_transformer_encoder_decoder,
    draw_transformer_decoder_only,
]
