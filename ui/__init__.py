"""Streamlit glue for the BudgetDAG app: session state, shared widgets, training.

No algorithm code here: everything that computes lives in ``budgetdag_core``.
"""
