"""BudgetDAG app: from a table to a trained sensor-acquisition policy.

Run with ``streamlit run app.py``. The pages follow the order a user works in;
they hold widgets and calls into ``budgetdag_core`` only.
"""

from __future__ import annotations

import streamlit as st

from ui import links, session, state, widgets
from ui.data import demo_dataset

st.set_page_config(
    page_title="BudgetDAG",
    page_icon=":material/account_tree:",
    layout="wide",
)

# Less empty space above the page title: figures fit on a 1280x800 screen.
st.html("<style>[data-testid='stMainBlockContainer']{padding-top:2.5rem}</style>")

navigation = st.navigation(
    [
        st.Page(
            widgets.PAGES["data"],
            title="Data",
            icon=":material/table_chart:",
            default=True,
        ),
        st.Page(widgets.PAGES["sensors"], title="Sensors", icon=":material/sensors:"),
        st.Page(
            widgets.PAGES["train"], title="Train", icon=":material/model_training:"
        ),
        st.Page(
            widgets.PAGES["explore"],
            title="Explore DAG",
            icon=":material/account_tree:",
        ),
        st.Page(widgets.PAGES["whatif"], title="What-if", icon=":material/route:"),
        st.Page(
            widgets.PAGES["tradeoff"], title="Trade-off", icon=":material/show_chart:"
        ),
        st.Page(widgets.PAGES["teaching"], title="Teaching", icon=":material/school:"),
        st.Page(widgets.PAGES["export"], title="Export", icon=":material/download:"),
    ]
)

try:
    session.begin()  # the URL's session token: restores the work kept under it
    state.init(widgets.default_dataset)
    links.apply_once(lambda name: demo_dataset(widgets.cached_demo(name)))
except Exception as exc:  # e.g. the bundled demo files are missing
    widgets.show_unexpected(exc, "loading the default demo")

widgets.start_workers()  # the server's pool for long work, on the first visit
widgets.collect_job()  # a job that ended while another page (or tab) was shown
# Kept before the page runs too: a page that ends with st.stop() leaves no
# way to read the session state after it (the `finally` below then fails).
session.keep()
# Pages that change the data, sensors or model redraw this slot.
st.session_state[state.STATUS_SLOT] = st.sidebar.empty()
widgets.refresh_status()
# Long work of this session, from every page; pages that start some redraw it.
st.session_state[state.JOB_SLOT] = st.sidebar.empty()
widgets.refresh_job_panel()

st.session_state[state.IN_APP] = True
# The URL carries the demo set-up (and the teaching step) for sharing.
try:
    on_teaching = navigation.url_path == "teaching"
    links.sync(st.session_state.get(state.TEACH_STEP, 0) if on_teaching else None)
except Exception:  # a stale URL is no reason to stop the page
    widgets.log.exception("Unexpected error while writing the URL")
try:
    navigation.run()
except Exception as exc:  # last resort: no raw tracebacks, the other pages still work
    widgets.show_unexpected(exc, f"drawing the {navigation.title} page")
finally:  # also after st.stop() or st.rerun() (page changes often end that way)
    if session.keep():
        widgets.refresh_status()  # the sidebar says what is kept for reloads
