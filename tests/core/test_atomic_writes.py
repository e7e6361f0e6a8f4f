"""Every file the library and the CLI write is whole or not there: ``kill -9``
in the middle of a write leaves the older file whole and loadable."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, load_policy, save_policy_skops
from budgetdag_core.cli import main
from budgetdag_core.persist import atomic_write, load_policy_skops, save_policy
from tests.conftest import SYNTH_SPEC, make_synthetic
from tests.kill_during_write import kill_during_write


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A small model, its files (pickle, skops), data and older outputs."""
    folder = tmp_path_factory.mktemp("atomic")
    X, y = make_synthetic(200)
    model = BudgetDAGClassifier(SYNTH_SPEC, cost_scale=0.05, cv=3, random_state=0)
    model.fit(X, y)
    X.assign(target=y).to_csv(folder / "data.csv", index=False)
    SYNTH_SPEC.to_json(folder / "spec.json")
    save_policy(model, folder / "m.pkl")
    save_policy_skops(model, folder / "m.skops")
    return folder, model, X


def _kill_mid_write(folder, code: str, target: str) -> bytes:
    """Kill ``code`` mid-write; check the partial file was beside ``target``
    and that ``target`` is byte for byte what it was."""
    before = (folder / target).read_bytes()
    partial = kill_during_write(code, folder)
    assert partial, "the child was killed before writing anything"
    assert (folder / target).read_bytes() == before
    for p in partial:
        p.unlink()
    return before


@pytest.mark.parametrize(
    ("name", "save", "load"),
    [("m.pkl", "save_policy", load_policy), ("m.skops", "save_policy_skops", None)],
)
def test_a_model_write_killed_midway_keeps_the_older_file(fitted, name, save, load):
    folder, model, X = fitted
    code = (
        "from budgetdag_core import load_policy, load_policy_skops, "
        "save_policy, save_policy_skops\n"
        f"path = {str(folder / name)!r}\n"
        "load = load_policy_skops if path.endswith('.skops') else load_policy\n"
        "model = load(path)\n"
        "model.label_name_ = 'changed'\n"
        f"{save}(model, path)\n"
    )
    _kill_mid_write(folder, code, name)
    loaded = (load or load_policy_skops)(folder / name)
    assert (loaded.predict(X) == model.predict(X)).all()


def test_a_traces_write_killed_midway_keeps_the_older_traces(fitted):
    folder, model, X = fitted
    out = folder / "traces.csv"
    args = ["predict", str(folder / "m.pkl"), str(folder / "data.csv")]
    assert main([*args, "--out", str(out)]) == 0
    code = f"from budgetdag_core.cli import main\nmain({[*args, '--out', str(out)]!r})"
    _kill_mid_write(folder, code, "traces.csv")
    assert list(pd.read_csv(out)["prediction"]) == list(model.predict(X))


def test_a_sweep_write_killed_midway_keeps_the_older_curve(fitted):
    folder, _, _ = fitted
    out = folder / "curve.csv"
    args = ["sweep", str(folder / "data.csv"), "--label", "target", "--sensors"]
    args += [str(folder / "spec.json"), "--cost-scales", "0.05", "--cv", "2"]
    args += ["--out", str(out)]
    old = pd.DataFrame({"cost_scale": [0.1, 0.2], "error": [0.3, 0.2]})
    old.to_csv(out, index=False)
    code = f"from budgetdag_core.cli import main\nmain({args!r})"
    _kill_mid_write(folder, code, "curve.csv")
    pd.testing.assert_frame_equal(pd.read_csv(out), old)


def test_atomic_write_removes_its_temporary_file_on_error(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_write(path, "w") as fh:
        fh.write("new, half")
        raise RuntimeError("the disk is full")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    with pytest.raises(ValueError, match="mode"):
        with atomic_write(path, "a"):
            pass


def test_atomic_write_keeps_permissions_and_writes_through_a_link(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    link = tmp_path / "link.pkl"
    link.symlink_to(path)
    with atomic_write(link) as fh:
        fh.write(b"new")
    assert link.is_symlink() and path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
