"""The demo loader is cached once per server; the page router never is."""

from __future__ import annotations

from ui import widgets


def test_demos_are_read_from_disk_once(monkeypatch):
    calls = []
    real = widgets.load_app_demo

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(widgets, "load_app_demo", counting)
    widgets.cached_demo.clear()
    first = widgets.cached_demo("pima")
    second = widgets.cached_demo("pima")
    widgets.cached_demo.clear()
    assert calls == ["pima"]
    assert first.train.equals(second.train) and first.spec == second.spec


def test_every_page_run_outside_the_app_is_redirected(monkeypatch):
    # A cached router would redirect the first session only, server-wide.
    redirects = []
    monkeypatch.setattr(
        widgets.st, "switch_page", lambda page, **kw: redirects.append(page)
    )
    monkeypatch.setattr(widgets.st, "session_state", {})
    monkeypatch.setattr(widgets.st, "query_params", type("Q", (), {"to_dict": dict}))
    widgets.enter_page()
    widgets.enter_page()
    assert redirects == ["app.py", "app.py"]
    monkeypatch.setattr(widgets.st, "session_state", {widgets.state.IN_APP: True})
    widgets.enter_page()
    assert len(redirects) == 2
