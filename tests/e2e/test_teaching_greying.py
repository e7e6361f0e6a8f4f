"""Teaching's greying at every step of a landsat replay, in a real browser
(issue 56, item 4: at "Step 16 of 16" reduced nodes were still grey, and nodes
moved between steps).

The landsat demo (4 bands, 16 states) trained from the Teaching page at three
folds, its policy downloaded from Export, then every step of the Graph-Reduce
walk taken with the Step button. At each step the DAG figure's data is read
from the page (the Plotly div's ``data``): the grey nodes must be exactly the
library's :func:`~budgetdag_core.teaching.pending_states` of the walk of the
downloaded model (refitted with its own parameters in the test), the node
being reduced the walk's current state, the caption's count the grey count,
and no node may move. A screenshot of the last step
(1280x800) goes to ``test-artifacts/teaching_last_step.png``.
"""

from __future__ import annotations

import re

import pytest
from sklearn.base import clone

from budgetdag_core import load_demo, load_policy
from budgetdag_core.teaching import graph_reduce_steps, pending_states

from .browser import LONG, app_page, main_text, no_exception, open_page, screenshot

pytestmark = pytest.mark.e2e
LINK = "/?demo=landsat&cv=3"  # three folds, not five: the training takes half the time
N_STATES = 16  # every subset of the 4 bands
# The DAG figure's state nodes as plain lists: state (first customdata
# column), x, y and marker colour per node. Plotly keeps numeric arrays as
# sent, plain or base64-encoded ({dtype, bdata, shape}): both are decoded.
READ_NODES = """() => {
    const gd = [...document.querySelectorAll('.js-plotly-plot')]
        .find(g => (g.data || []).some(t => t.name === 'states'));
    if (!gd) return null;
    const t = gd.data.find(d => d.name === 'states');
    const kinds = {f8: Float64Array, f4: Float32Array, i4: Int32Array,
        i2: Int16Array, i1: Int8Array, u4: Uint32Array, u2: Uint16Array,
        u1: Uint8Array};
    const rows = a => {  // -> [[...], ...] or [...]
        if (a === undefined || a === null) return null;
        if (a.bdata === undefined)
            return Array.from(a, r => ArrayBuffer.isView(r) ? Array.from(r) : r);
        const bytes = Uint8Array.from(atob(a.bdata), ch => ch.charCodeAt(0));
        const flat = Array.from(new kinds[a.dtype](bytes.buffer));
        const shape = String(a.shape ?? flat.length).split(',').map(Number);
        if (shape.length < 2) return flat;
        return Array.from({length: shape[0]},
            (_, k) => flat.slice(k * shape[1], (k + 1) * shape[1]));
    };
    const custom = rows(t.customdata);
    const x = rows(t.x), y = rows(t.y);
    const colour = t.marker.color;
    const colours = typeof colour === 'string'
        ? Array(x.length).fill(colour) : rows(colour);
    const ring = gd.data.find(d => d.name === 'node being reduced');
    return {states: custom && custom.map(r => Array.isArray(r) ? r[0] : r),
            x, y, colours, ring: ring ? [rows(ring.x)[0], rows(ring.y)[0]] : null};
}"""


def dag_nodes(page, state: int) -> dict[int, tuple[float, float, str]]:
    """The Teaching DAG's nodes from the page, state -> (x, y, colour), once
    the figure rings ``state`` as the node being reduced (a rerun redraws the
    figure a moment after the script ends)."""
    for _ in range(100):
        read = page.evaluate(READ_NODES)
        if read is not None and read["states"] is not None and read["ring"]:
            nodes = dict(
                zip(map(int, read["states"]), zip(read["x"], read["y"]), strict=True)
            )
            if nodes.get(state) == tuple(read["ring"]):
                break
        page.wait_for_timeout(100)
    else:
        raise AssertionError(f"the figure never rang node {state}: {read}")
    n = len(read["x"])
    assert len(read["y"]) == len(read["states"]) == len(read["colours"]) == n
    return {
        int(s): (x, y, c)
        for s, x, y, c in zip(
            read["states"], read["x"], read["y"], read["colours"], strict=True
        )
    }


def reducing(page) -> int:
    """The node the page says it is reducing (its step summary)."""
    found = re.search(r"Reducing node (\d+)", main_text(page))
    assert found, main_text(page)[:800]
    return int(found.group(1))


def take_step(page, i: int, last: int) -> None:
    """Click Step and wait for the page to show step ``i`` (0-based)."""
    page.get_by_role("button", name="Step", exact=True).click()
    page.get_by_text(f"Step {i + 1} of {last + 1}", exact=True).wait_for(timeout=LONG)
    page.wait_for_selector(
        "[data-testid='stApp'][data-test-script-state='notRunning']", timeout=LONG
    )
    page.wait_for_timeout(200)


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    """The trained app on the Teaching page at step 0, and the library's walk
    of the model the page replays (its policy downloaded from Export)."""
    with app_page(LINK, log_name="teaching") as page:
        open_page(page, "Teaching", LONG)
        page.get_by_role("button", name="Train with the current settings").click()
        page.get_by_text("Reducing node").wait_for(timeout=LONG)
        open_page(page, "Export", LONG)
        with page.expect_download(timeout=LONG) as download:
            page.get_by_role("button", name=re.compile(r"\.pkl")).click()
        path = tmp_path_factory.mktemp("teaching") / "policy.pkl"
        download.value.save_as(path)
        # A saved policy is slim (no out-of-fold predictions to replay): the
        # same estimator, refitted with its own parameters, is the page's model.
        demo = load_demo("landsat")
        model = clone(load_policy(path)).fit(demo.X_train, demo.y_train)
        steps = graph_reduce_steps(
            model, demo.X_train, demo.y_train, rows=6, random_state=0
        )
        open_page(page, "Teaching", LONG)
        page.get_by_text("Step 1 of").wait_for(timeout=LONG)
        yield page, model, demo, steps


def test_every_step_greys_exactly_the_nodes_not_reduced_yet(walk):
    from budgetdag_core.plotting._style import PENDING_COLOR

    page, model, demo, steps = walk
    last = len(steps) - 1
    assert len(steps) == N_STATES
    assert sorted(s.state for s in steps) == list(range(N_STATES))
    first = None
    for i in range(len(steps)):
        if i:
            take_step(page, i, last)
        text = main_text(page)
        assert f"Step {i + 1} of {N_STATES}" in text
        assert reducing(page) == steps[i].state, i
        nodes = dag_nodes(page, steps[i].state)
        assert set(nodes) == set(range(N_STATES)), (i, sorted(nodes))
        grey = {k for k, (_, _, c) in nodes.items() if c == PENDING_COLOR}
        assert grey == pending_states(steps, i), (i, sorted(grey))
        # The rule itself: a step reduces one node, the later ones wait.
        assert grey == {s.state for s in steps[i + 1 :]}, i
        assert steps[i].state not in grey
        if grey:
            assert f"Grey nodes ({len(grey)}) are not reduced yet" in text, i
        else:
            assert "Every node is reduced" in text
        where = {k: (x, y) for k, (x, y, _) in nodes.items()}
        first = first or where
        assert where == first, (i, {k: v for k, v in where.items() if first[k] != v})
        no_exception(page)
    # The last step: nothing grey, the Step button spent; the states no
    # training example reaches are reduced too (faded, not grey).
    assert page.get_by_role("button", name="Step", exact=True).is_disabled()
    flow = model.flow(demo.X_train, demo.y_train)
    unreached = {k for k in flow.nodes if flow.nodes[k]["arrived"] == 0}
    assert unreached  # the case of the bug: reduced, yet no example there
    assert all(nodes[k][2] != PENDING_COLOR for k in unreached)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()  # the DAG
    screenshot(page, "teaching_last_step")
