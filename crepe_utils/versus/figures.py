"""The figures of a comparison (a forest plot of the per-set differences) and of a standing (one strip per field
column: the 202 checkpoints, the user's models and the blind scorers), drawn with the project's style."""
from __future__ import annotations

import math
import textwrap

import numpy as np

from ..analysis import paired
from ..lazy import lazy
from .pairing import POOLED, set_label, telling_key

pd = lazy("pandas")
plt = lazy("matplotlib.pyplot")

SET_COLOR, POOLED_COLOR = "#4C72B0", "#C44E52"
FIELD_COLOR, MODEL_COLOR, BLIND_COLOR = "#9A9A9A", "#C44E52", "#DD8452"


def _wrapped(title: str, width: int = 62) -> str:
    """A title on lines of at most ``width`` characters (it stays within the figure's width)."""
    return "\n".join(textwrap.wrap(title, width)) or title


def forest(result, title: str | None = None):
    """B − A per set with its paired interval (the pooled row last, in red), zero dashed."""
    rows = [r for r in result.table.to_dict("records") if r["n_paired"]]
    labels = [set_label(r, telling_key(result)) for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 1.2 + 0.36 * max(len(rows), 1)))
    for y, row in enumerate(rows):
        color = POOLED_COLOR if row["scope"] == POOLED else SET_COLOR
        err = [[row["diff_pp"] - row["diff_ci_low"]], [row["diff_ci_high"] - row["diff_pp"]]]
        ax.errorbar(row["diff_pp"], y, xerr=err,
                    fmt="D" if row["scope"] == POOLED else "o", color=color, ms=5, capsize=2.5, lw=1.2)
    ax.axvline(0.0, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=9)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"B − A, R@1 points (ties {result.tie_policy});\n95% {paired.INTERVAL_METHOD}", fontsize=9)
    ax.set_title(_wrapped(title or f"{result.b} (B) against {result.a} (A): paired by query"), fontsize=10)
    ax.tick_params(axis="x", labelsize=9)
    fig.tight_layout()
    return fig


def strips(field_values: pd.DataFrame, placed: pd.DataFrame, title: str):
    """One strip per column of ``placed`` (rows: model, column, model_value, kind ``model`` or ``blind``):
    the field's values as grey ticks (``field_values``: one column each), the models and blind scorers marked."""
    columns = list(dict.fromkeys(placed["column"]))
    fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.42 * max(len(columns), 1)))
    for y, column in enumerate(columns):
        values = field_values[column].dropna().to_numpy(float)
        jitter = (np.arange(len(values)) % 5 - 2) * 0.05
        ax.scatter(values, y + jitter, s=7, color=FIELD_COLOR, alpha=0.6, lw=0,
                   label="the field's checkpoints" if y == 0 else None)
        here = placed[placed["column"] == column]
        for kind, color, marker in (("blind", BLIND_COLOR, "s"), ("model", MODEL_COLOR, "D")):
            part = here[here["kind"] == kind]
            ax.scatter(part["model_value"], [y] * len(part), s=36, color=color, marker=marker, zorder=3,
                       edgecolor="white", lw=0.6, label=("blind scorers" if kind == "blind" else "your models")
                       if y == 0 and len(part) else None)
    ax.set_yticks(range(len(columns)), columns, fontsize=9)
    ax.set_ylim(len(columns) - 0.5, -0.5)
    ax.set_xlabel("accuracy on the field table's scale (%)", fontsize=9)
    ax.set_xlim(0, 100)
    ax.tick_params(axis="x", labelsize=9)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        below = -0.12 - 1.2 / (0.9 + 0.42 * max(len(columns), 1))        # under the axis label, in axes units
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, below), ncols=3)
    ax.set_title(_wrapped(title), fontsize=10)
    fig.tight_layout()
    return fig


def side_by_side(rows: pd.DataFrame, title: str):
    """The same differences, two ways: per row (``label``), the independent interval (two models' own intervals
    combined, as if on separate queries) above the paired one, with ``diff_pp`` between."""
    fig, ax = plt.subplots(figsize=(6.4, 0.9 + 0.55 * max(len(rows), 1)))
    for y, row in enumerate(rows.to_dict("records")):
        for dy, low, high, color, name in ((-0.15, row["independent_low"], row["independent_high"], "#8C8C8C",
                                            "independent intervals (Newcombe, unpaired)"),
                                           (0.15, row["diff_ci_low"], row["diff_ci_high"], SET_COLOR,
                                            "paired interval (Newcombe, paired)")):
            if math.isnan(low):
                continue
            ax.errorbar(row["diff_pp"], y + dy, xerr=[[row["diff_pp"] - low], [high - row["diff_pp"]]], fmt="o",
                        color=color, ms=4, capsize=2.5, lw=1.2, label=name if y == 0 else None)
    ax.axvline(0.0, color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(rows)), list(rows["label"]), fontsize=9)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("B − A, R@1 points; 95% intervals", fontsize=9)
    below = -0.1 - 1.0 / (0.9 + 0.55 * max(len(rows), 1))                # under the axis label, in axes units
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, below), ncols=1)
    ax.set_title(_wrapped(title), fontsize=10)
    fig.tight_layout()
    return fig
