"""Render the core figures to HTML and PNG for a visual check (1280x800 viewport).

    python docs/figure_gallery.py [OUT_DIR]

Fits small models (landsat with 2 and 4 bands, letter with 8 two-column sensors
= 256 states, the toy), writes each figure as standalone HTML and screenshots
it with Playwright + the system Chromium (no kaleido needed). Takes a few
minutes on 2 cores. PNGs are skipped if Playwright or Chromium is missing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from budgetdag_core import (  # noqa: E402
    BudgetDAGClassifier,
    SensorSpec,
    load_demo,
    path_of,
    toy_dataset,
)
from budgetdag_core.plotting import (  # noqa: E402
    dag_figure,
    decision_regions_figure,
    tradeoff_figure,
)


def screenshot(html_files: list[Path]) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("playwright missing: HTML only")
        return
    from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for f in html_files:
            page.goto(f.resolve().as_uri())
            page.wait_for_selector(".main-svg")
            page.wait_for_timeout(300)
            page.screenshot(path=str(f.with_suffix(".png")), full_page=True)
        browser.close()


def tradeoff_frame(model, demo) -> pd.DataFrame:
    """A small trade-off table from refits over cost_scale and the fixed states."""
    rows = []
    models = {
        cs: model.refit_policies(demo.X_train, demo.y_train, cs)
        for cs in (0.0, 0.003, 0.01, 0.03, 0.1)
    }
    for split, (X, y) in {
        "train": (demo.X_train, demo.y_train),
        "test": (demo.X_test, demo.y_test),
    }.items():
        for cs, m in models.items():
            ev = m.evaluate(X, y)
            rows.append({"method": "dag", "cost_scale": cs, "split": split, **ev})
        states = model.evaluate_states(X, y)
        for _, r in states.iterrows():
            method = "all_sensors" if r["state"] == len(states) - 1 else "fixed"
            rows.append(
                {
                    "method": method,
                    "avg_cost": r["avg_cost"],
                    "avg_sensors": r["n_sensors"],
                    "error": r["error"],
                    "split": split,
                    "sensors": r["sensors"],
                }
            )
    return pd.DataFrame(rows)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    figs = {}
    t0 = time.time()
    landsat = load_demo("landsat")
    spec2 = landsat.spec.subset(["band1", "band2"])
    m2 = BudgetDAGClassifier(spec2, cost_scale=0.02, cv=3, random_state=0)
    m2.fit(landsat.X_train[spec2.columns], landsat.y_train)
    X2 = landsat.X_test[spec2.columns]
    figs["landsat_4_states"] = dag_figure(
        m2, X2, landsat.y_test, title="landsat, 2 bands"
    )
    m4 = BudgetDAGClassifier(landsat.spec, cost_scale=0.01, cv=3, random_state=0)
    m4.fit(landsat.X_train, landsat.y_train)
    path = path_of(m4, landsat.X_test.iloc[[7]])
    figs["landsat_16_states"] = dag_figure(
        m4,
        landsat.X_test,
        landsat.y_test,
        highlight_path=path.states,
        selected=path.states[-1],
        title="landsat, 4 bands, one test example's path",
    )
    figs["landsat_16_error"] = dag_figure(
        m4, landsat.X_test, landsat.y_test, color="error", hide_unvisited=False
    )
    figs["landsat_tradeoff"] = tradeoff_figure(
        tradeoff_frame(m4, landsat), split=None, hull=True, title="landsat"
    )
    print(f"landsat done in {time.time() - t0:.0f} s")

    letter = load_demo("letter")
    pairs = [letter.spec.columns[i : i + 2] for i in range(0, 16, 2)]
    names = [
        "position",
        "size",
        "ink_mean",
        "moments_y",
        "moments_2",
        "moments_3",
        "edges_x",
        "edges_y",
    ]
    spec8 = SensorSpec(
        dict(zip(names, pairs)), dict(zip(names, [1, 1, 1, 2, 2, 2, 3, 3]))
    )
    train = letter.train.sample(3000, random_state=0)
    m8 = BudgetDAGClassifier(
        spec8,
        cost_scale=0.03,
        cv=3,
        random_state=0,
        policy_degree=1,
        classifier=LinearDiscriminantAnalysis(),
    ).fit(train[spec8.columns], train["label"])
    X8 = letter.X_test[spec8.columns]
    figs["letter_256_states"] = dag_figure(
        m8, X8, letter.y_test, title="letter, 256 states"
    )
    figs["letter_256_all"] = dag_figure(m8, X8, letter.y_test, hide_unvisited=False)
    figs["letter_256_bare"] = dag_figure(m8, title="letter: the bare 256-state DAG")
    print(f"letter done in {time.time() - t0:.0f} s")

    toy = toy_dataset()
    mt = BudgetDAGClassifier(toy.spec, cost_scale=0.03, cv=3, random_state=0)
    mt.fit(toy.X_train, toy.y_train)
    figs["toy_dag"] = dag_figure(mt, toy.X_test, toy.y_test, title="toy")
    for k in range(mt.sensor_dag_.n_states):
        figs[f"toy_regions_{k}"] = decision_regions_figure(
            mt, k, toy.X_train, toy.y_train
        )
    files = []
    for name, fig in figs.items():
        path = out / f"{name}.html"
        fig.write_html(path)
        files.append(path)
    screenshot(files)
    print(f"{len(files)} figures in {out} ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    np.seterr(all="ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "out",
        nargs="?",
        type=Path,
        default=Path("figure_gallery"),
        help="folder for the HTML and PNG files (default: ./figure_gallery)",
    )
    main(parser.parse_args().out)
