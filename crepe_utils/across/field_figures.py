"""Notebook 10's figures: the field's 202 checkpoints against ImageNet, their correlations beside the papers', and
the blind scorers among them."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from .. import field
from ..analysis.reporting import SCORER_COLORS, cite
from ..lazy import lazy

pd = lazy("pandas")

PRETRAINED, FINE_TUNED = "#4C72B0", "#55A868"     # green: no blind scorer of these figures has it
SET_COLORS = {"pretrained": PRETRAINED, "fine-tuned": FINE_TUNED, "all": "#555555"}
def chance(column: str) -> float:
    """Chance on ``column``, %, as its benchmark declares it."""
    return field.declaration(column).chance(field.part(column))


def _panel(ax, table: pd.DataFrame, column: str, corr: pd.DataFrame) -> None:
    for fine, color, label in ((False, PRETRAINED, "pretrained"), (True, FINE_TUNED, "hard-negative fine-tuned")):
        part = table[table["fine_tuned"] == fine]
        ax.scatter(part[field.IMAGENET], part[column], s=12 if not fine else 22, color=color, alpha=0.65 if not fine
                   else 0.95, lw=0, label=label, zorder=2 + fine)
    ax.axhline(chance(column), color="grey", ls="--", lw=0.8)
    row = corr[(corr["column"] == column) & (corr["set"] == "pretrained")].iloc[0]
    ax.set_title(f"{field.part(column)}\nr = {row.r:+.2f} [{row.r_low:+.2f}, {row.r_high:+.2f}] (pretrained)",
                 fontsize=9.5)
    ax.tick_params(labelsize=9)


def scatter(table: pd.DataFrame, benchmark: str, corr: pd.DataFrame, ncols: int = 2):
    """One benchmark's columns against ImageNet top-1, one panel each: pretrained and fine-tuned checkpoints in
    two colours, chance dashed, each panel's r over the pretrained with its bootstrap interval."""
    columns = field.COLUMNS[benchmark]
    ncols = min(ncols, len(columns))
    nrows = math.ceil(len(columns) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.7 * ncols, 2.9 * nrows + 1.0), squeeze=False)
    for ax, column in zip(axes.flat, columns):
        _panel(ax, table, column, corr)
    for ax in axes.flat[len(columns):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (%)", fontsize=9.5)
    for i, ax in enumerate(axes.flat[:len(columns)]):
        if i + ncols >= len(columns):                       # no panel below it: it carries the axis' label
            ax.set_xlabel("ImageNet zero-shot top-1 (%)", fontsize=9.5)
    axes.flat[0].legend(fontsize=9, loc="upper left")
    fig.suptitle(f"{field.declarations()[benchmark].label}: the field's {len(table)} checkpoints\nagainst ImageNet · "
                 f"{field.SHORT}", fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"{field.SHORT}'s table of 202 checkpoints, {field.reported.transcribed('vl_compo.csv')}")


def correlations(corr: pd.DataFrame, papers: pd.DataFrame):
    """Left: r of every column against ImageNet with its 95% bootstrap interval, per set of checkpoints, and the
    papers' published r (``papers``' rows of kind r). Right: R² of the columns of the benchmark whose paper published
    R² (its rows of kind r2, per complexity) beside that benchmark's columns over the field."""
    columns = list(dict.fromkeys(corr["column"]))
    fig = plt.figure(figsize=(6.9, 0.3 * len(columns) + 6.2))
    grid = fig.add_gridspec(2, 1, height_ratios=[0.3 * len(columns) + 0.8, 3.6])
    left, right = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    y = np.arange(len(columns))[::-1]
    offsets = {"pretrained": 0.22, "all": 0.0, "fine-tuned": -0.22}
    for which, dy in offsets.items():
        g = corr[corr["set"] == which].set_index("column").loc[columns]
        left.errorbar(g["r"], y + dy, xerr=[g["r"] - g["r_low"], g["r_high"] - g["r"]], fmt="o", ms=3.2, lw=1,
                      color=SET_COLORS[which], label=f"{which} ({int(g['n'].iloc[0])})")
    published_r = papers[papers["kind"] == "r"]
    for (paper, models), rows in published_r.groupby(["paper", "paper_models"], sort=False):
        left.scatter(rows["paper_value"], [y[columns.index(c)] + 0.22 for c in rows["column"]], marker="D", s=30,
                     color="#C44E52", zorder=5, label=f"{paper}'s r ({models} models)")
    left.axvline(0, color="grey", lw=0.8)
    left.set_yticks(y, columns, fontsize=9)
    left.set(xlabel="Pearson r against ImageNet top-1", xlim=(-1.05, 1.05),
             title="Every column against ImageNet, 95% bootstrap intervals")
    left.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.075), ncols=2)
    r2 = papers[papers["kind"] == "r2"]
    r2_columns = list(field.COLUMNS[field.benchmark_of(r2["column"].iloc[0])])
    yc = np.arange(len(r2_columns))[::-1]
    for which, dy in offsets.items():
        g = corr[corr["set"] == which].set_index("column").loc[r2_columns]
        right.errorbar(g["r2"], yc + dy, xerr=[g["r2"] - g["r2_low"], g["r2_high"] - g["r2"]], fmt="o", ms=3.5,
                       lw=1, color=SET_COLORS[which])
    for i, r in enumerate(r2.itertuples()):
        level = yc[r2_columns.index(r.column)] + 0.38
        right.scatter([r.paper_value], [level], marker="v", s=36, color="#C44E52", zorder=5)
        # the labels alternate in height: n = 4 and n = 8 lie 0.01 apart
        right.annotate(r.statistic.split("at ")[-1], (r.paper_value, level + 0.06 + 0.16 * (i % 2)), fontsize=9,
                       ha="left", va="bottom", color="#C44E52")
    right.set_yticks(yc, r2_columns, fontsize=9)
    right.set(xlabel="R² against ImageNet top-1\n(CREPE §5.4 gives R² per complexity n over its 7 open_clip "
              "models;\nthe field pools every n. Colours as above.)", xlim=(0, 1),
              ylim=(-0.6, len(r2_columns) + 0.3), title="CREPE: R², with §5.4's HN-Swap R² (▼, 7 models)")
    fig.suptitle(f"The papers' ImageNet claims at the field's scale\n{field.SHORT}", fontweight="bold")
    fig.tight_layout()
    return cite(fig, f"{field.SHORT}'s table of 202 checkpoints, {field.reported.transcribed('vl_compo.csv')}")


def blind(table: pd.DataFrame, placement: pd.DataFrame):
    """Per column: the field's 202 values (pretrained and fine-tuned), chance, and each blind scorer's value; the
    best scorer of the column with its exact 95% interval."""
    columns = [c for c in dict.fromkeys(c for cols in field.COLUMNS.values() for c in cols) if c in set(placement["column"])]
    fig, ax = plt.subplots(figsize=(7.4, 0.34 * len(columns) + 2.8))
    y = {c: i for i, c in enumerate(columns[::-1])}
    rng = np.random.default_rng(0)                       # vertical jitter of the checkpoints' dots, fixed
    for c in columns:
        for fine, color in ((False, PRETRAINED), (True, FINE_TUNED)):
            v = table.loc[table["fine_tuned"] == fine, c].to_numpy(float)
            ax.scatter(v, y[c] + rng.uniform(-0.18, 0.18, len(v)), s=5 if not fine else 12, color=color,
                       alpha=0.45 if not fine else 0.9, lw=0)
        ax.plot([chance(c)] * 2, [y[c] - 0.35, y[c] + 0.35], color="grey", lw=1)
    seen = set()
    for r in placement.itertuples():
        color = SCORER_COLORS.get(r.scorer, "black")
        ax.scatter(r.value, y[r.column], marker="|", s=120, lw=2, color=color,
                   label=None if r.scorer in seen else f"blind:{r.scorer}", zorder=4)
        seen.add(r.scorer)
    best = placement.loc[placement.groupby("column")["value"].idxmax()]
    for r in best.itertuples():
        ax.plot([r.ci_low, r.ci_high], [y[r.column]] * 2, color=SCORER_COLORS.get(r.scorer, "black"), lw=3,
                alpha=0.6, zorder=3)
        ax.text(101, y[r.column], f"beats {r.beats}", fontsize=9, va="center")
    ax.scatter([], [], s=12, color=PRETRAINED, label="pretrained checkpoints")
    ax.scatter([], [], s=12, color=FINE_TUNED, label="hard-negative fine-tunes")
    ax.plot([], [], color="grey", lw=1, label="chance")
    ax.set_yticks(list(y.values()), list(y.keys()), fontsize=9)
    ax.set(xlim=(-1, 100), xlabel="accuracy (%); a blind scorer's tie counts against it",
           title=f"Without looking, among the field's {len(table)} checkpoints\n(right: how many the best scorer beats)")
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.09 - 2.0 / (0.34 * len(columns) + 2.8)),
              ncols=2)
    fig.tight_layout()
    return fig
