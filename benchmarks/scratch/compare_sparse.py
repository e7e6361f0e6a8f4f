"""Sparse-DAG readings of bench_afa runs beside the peers of saved baseline runs
(same datasets, seeds and rows): mean test error at 10/25/50 % of the
all-sensor cost, cost to reach all-feature HGB + 1 pt, speed ratios.

    python benchmarks/scratch/compare_sparse.py NEW_DIR [NEW_DIR ...] \
        --base /work/wt/afa-bench/benchmarks/out/afa_p*
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd


def load(dirs: list[str], name: str) -> pd.DataFrame:
    parts = [pd.read_csv(Path(d) / name) for d in dirs if (Path(d) / name).exists()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("new", nargs="+")
    p.add_argument("--base", nargs="+", required=True)
    a = p.parse_args()
    new, base = load(a.new, "readings.csv"), load(a.base, "readings.csv")
    new = new[new.method == "dag"].assign(method="sparse")
    base = base[base.method.isin(["dag", "aaco", "greedy"])]
    keys = new[["dataset", "seed"]].drop_duplicates()
    base = base.merge(keys, on=["dataset", "seed"])
    both = pd.concat([new, base], ignore_index=True)
    cols = ["e10", "e25", "e50", "reach"]
    mean = both.groupby(["dataset", "method"])[cols].mean()
    n = both.groupby(["dataset", "method"]).seed.nunique().rename("seeds")
    print(pd.concat([mean.round(3), n], axis=1).to_string())
    sn, sb = load(a.new, "speed.csv"), load(a.base, "speed.csv")
    sn = sn.assign(
        fit_x=sn.dag_fit_s / sn.hgb_fit_s,
        rows_s=sn.dag_rows_per_s,
    )
    cols = ["dataset", "seed", "dag_states", "fit_x", "rows_s", "dag_session_ms"]
    if "dag_first_context" in sn:
        cols.append("dag_first_context")
    print()
    print(sn[cols].round(3).to_string(index=False))
    if "aaco_first_context" in sb:
        sb = sb.merge(sn[["dataset", "seed"]], on=["dataset", "seed"])
        cols = ["dataset", "seed", "aaco_first_context", "greedy_first_context"]
        print(sb[[c for c in cols if c in sb]].to_string(index=False))


if __name__ == "__main__":
    main()
