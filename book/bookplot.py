"""Plot helpers shared by the book's pages (import bookplot; the kernel runs in book/).

Only drawing code lives here. Every page calls use_korean_font() and use_sharp_figures() first:
Hangul in figures does not depend on matplotlib's per-user font cache (koreanfont.py registers
the course font by its path), and figures are sharp at 2x.
"""

import torch
from koreanfont import use_korean_font  # the pages import it from here


def use_sharp_figures():
    """Inline figures as PNG at twice their pixel size, shown at their normal size ("retina"),
    so they stay sharp on a 2x screen. Does nothing outside IPython."""
    from IPython import get_ipython

    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("retina")


def show_matrix(ax, w, title, xlabels=None, ylabels=None, fmt="{:.2f}", cmap="Blues", vmax=None):
    """Heatmap of a 2-D tensor (T, S) with its values written in the cells."""
    w = torch.as_tensor(w).detach().float().cpu()
    vmax = float(w.max()) if vmax is None else vmax
    ax.imshow(w.numpy(), cmap=cmap, vmin=0, vmax=vmax)
    if xlabels is not None:
        ax.set_xticks(range(w.shape[1]), xlabels[: w.shape[1]], rotation=45)
    if ylabels is not None:
        ax.set_yticks(range(w.shape[0]), ylabels[: w.shape[0]])
    ax.set_title(title)
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            dark = vmax > 0 and w[i, j] > 0.6 * vmax
            ax.text(
                j,
                i,
                fmt.format(float(w[i, j])),
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )


def show_weights(ax, w, title, labels, vmax=None):
    """Attention weights (T, S): rows are queries, columns are keys."""
    show_matrix(ax, w, title, xlabels=labels, ylabels=labels, vmax=vmax)
    ax.set_xlabel("키 (참고되는 토큰)")
    ax.set_ylabel("쿼리 (참고하는 토큰)")


def show_mask(ax, mask, title):
    """Boolean keep-mask (T, S): O = may attend (True), x = blocked (False)."""
    m = torch.as_tensor(mask).detach().cpu()
    ax.imshow(m.numpy(), cmap="Greens", vmin=0, vmax=1.3)
    ax.set_title(title)
    ax.set_xticks(range(m.shape[1]))
    ax.set_yticks(range(m.shape[0]))
    ax.set_xlabel("키 j")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, "O" if m[i, j] else "×", ha="center", va="center", fontsize=9)
