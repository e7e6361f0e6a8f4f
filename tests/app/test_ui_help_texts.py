"""The widgets' help texts (ui/help.toml) belong to real widget keys."""

from __future__ import annotations

from ui import state
from ui.widgets import help_texts


def test_every_help_text_names_a_widget_key():
    keys = {v for k, v in vars(state).items() if k.startswith("W_")}
    texts = help_texts()
    assert texts, "ui/help.toml is empty"
    assert sorted(set(texts) - keys) == []
    assert all(isinstance(t, str) and t.strip() for t in texts.values())
    # The pages' persisted inputs with a fixed help text find it there.
    for key in (state.W_CV, state.W_SEED, state.W_DEGREE, state.W_TRADE_POINTS):
        assert key in texts
