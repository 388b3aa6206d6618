"""``python -m crepe_utils compare A B --out DIR`` and ``python -m crepe_utils standing RESULTS... --out DIR``: thin
fronts to :func:`crepe_utils.versus.output.compare` and :func:`~crepe_utils.versus.output.standing`,
which ``crepe_utils.compare(...)`` and ``crepe_utils.standing(...)`` are."""
from __future__ import annotations

from ..analysis import paired
from .output import compare, standing
from .pairing import TIE_POLICIES, summary_lines


def add_arguments_compare(parser) -> None:
    parser.add_argument("a", help="result folder A (written by evaluate: <results>/<model>/<benchmark>)")
    parser.add_argument("b", help="result folder B, of the same benchmark and data")
    parser.add_argument("--out", required=True, help="the comparison's folder (replaced whole): comparison.csv, "
                                                     "comparison.svg")
    parser.add_argument("--tie-policy", choices=TIE_POLICIES, default="pessimistic",
                        help="a tied query counts against the model (pessimistic, default) or for it")
    parser.epilog = (f"Per set: B − A in R@1 points with its 95% interval ({paired.INTERVAL_METHOD}), the "
                     f"{paired.TEST_METHOD} and {paired.ADJUSTMENT_METHOD} over the sets.")


def run_compare(args) -> int:
    result = compare(args.a, args.b, tie_policy=args.tie_policy, out=args.out)
    print("\n".join(summary_lines(result)))
    print(f"comparison: {args.out}")
    return 0


def add_arguments_standing(parser) -> None:
    parser.add_argument("results", nargs="+", help="result folders (written by evaluate); blind:<scorer> results "
                                                   "among them are the blind scorers each column is set beside")
    parser.add_argument("--out", required=True, help="the standing's folder (replaced whole): standing.csv, "
                                                     "standing.svg, standing.md, standing.html")
    parser.add_argument("--tie-policy", choices=TIE_POLICIES, default="pessimistic",
                        help="a tied query counts against the model (pessimistic, default) or for it")
    parser.add_argument("--columns", nargs="+", default=None,
                        help="only these columns of the field table (as it spells them, e.g. crepe::negate)")


def run_standing(args) -> int:
    result = standing(args.results, tie_policy=args.tie_policy, columns=args.columns, out=args.out)
    for row in result.table.to_dict("records"):
        blind = (f"; best blind {row['blind_best']} {row['blind_best_value']:.2f}" if row["blind_best"] else "")
        print(f"{row['model']} on {row['column']}: {row['model_value']:.2f} ({row['model_k']} of {row['model_n']}), "
              f"above {row['field_below']} of {row['field_n']} checkpoints; field best {row['field_best']} "
              f"{row['field_best_value']:.2f}{blind}")
    print(f"standing: {args.out}")
    return 0
