"""ui.store: a session's work on disk, by random token only, capped and expiring."""

from __future__ import annotations

import os
import time

import pytest

from ui import store


def test_tokens_are_random_and_strictly_checked():
    a, b = store.new_token(), store.new_token()
    assert a != b and store.valid_token(a) and store.valid_token(b)
    for bad in [
        "",
        "short",
        a + "x",
        a[:-1] + "/",
        "../" + a[3:],
        a[:-1] + ".",
        None,
        5,
    ]:
        assert not store.valid_token(bad), bad
    with pytest.raises(ValueError, match="Not a session token"):
        store.save("../../etc/passwd", {"x": 1})
    assert store.load("../../etc/passwd") is None


def test_save_and_load_round_trip_per_token(tmp_path):
    token, other = store.new_token(), store.new_token()
    assert store.save(token, {"dataset": "d", "run": [1, 2]}) is None
    back = store.load(token)
    assert back["dataset"] == "d" and back["run"] == [1, 2]
    assert store.load(other) is None  # another token never reads it
    files = list(store.store_dir().glob("*.pkl"))
    assert [f.name for f in files] == [f"{token}.pkl"]
    assert os.stat(store.store_dir()).st_mode & 0o077 == 0  # private folder
    store.drop(token)
    assert store.load(token) is None


def test_expired_snapshots_are_gone(tmp_path):
    token = store.new_token()
    store.save(token, {"dataset": "d"})
    path = store.store_dir() / f"{token}.pkl"
    old = time.time() - (store.EXPIRY_HOURS * 3600 + 60)
    os.utime(path, (old, old))
    assert store.load(token) is None
    assert not path.exists()


def test_size_caps(monkeypatch):
    token = store.new_token()
    monkeypatch.setattr(store, "MAX_BYTES", 1000)
    # Random bytes: the store compresses, and they do not shrink.
    why = store.save(token, {"dataset": os.urandom(5000)})
    assert why is not None and "over the" in why
    assert store.load(token) is None
    # Past the total cap the oldest snapshots go first.
    monkeypatch.setattr(store, "MAX_BYTES", 10**6)
    monkeypatch.setattr(store, "MAX_TOTAL_BYTES", 2500)
    tokens = [store.new_token() for _ in range(3)]
    for i, t in enumerate(tokens):
        store.save(t, {"dataset": os.urandom(1000)})
        path = store.store_dir() / f"{t}.pkl"
        os.utime(path, (time.time() - 100 + i, time.time() - 100 + i))
    store.prune()
    assert store.load(tokens[0]) is None
    assert store.load(tokens[2]) is not None


def test_a_foreign_or_damaged_file_is_not_used():
    token = store.new_token()
    (store.store_dir() / f"{token}.pkl").write_bytes(b"not a pickle")
    assert store.load(token) is None


def test_a_snapshot_write_killed_midway_keeps_the_older_one(tmp_path):
    """kill -9 while a snapshot is written: the older one loads as it was."""
    from tests.kill_during_write import kill_during_write

    token = store.new_token()
    assert store.save(token, {"dataset": "older", "run": list(range(100))}) is None
    path = store.store_dir() / f"{token}.pkl"
    before = path.read_bytes()
    code = (
        "import os\nfrom ui import store\n"
        f"store.save({token!r}, {{'dataset': 'newer', 'run': os.urandom(50000)}})\n"
    )
    partial = kill_during_write(code, store.store_dir())
    assert partial and path.read_bytes() == before
    assert store.load(token) == {
        "format": store.FORMAT,
        "dataset": "older",
        "run": list(range(100)),
    }


@pytest.mark.parametrize("value", ["-5", "0", "abc", "nan", "inf"])
def test_a_store_cap_that_is_no_size_is_said_and_the_default_kept(monkeypatch, value):
    monkeypatch.setenv(store.ENV_MAX_MB, value)
    with pytest.warns(UserWarning, match=f"BUDGETDAG_STORE_MAX_MB='{value}' is not"):
        assert store.max_bytes() == store.MAX_BYTES
    monkeypatch.setenv(store.ENV_MAX_MB, "1.5")
    assert store.max_bytes() == int(1.5 * 2**20)


def test_every_setting_of_the_app_warns_alike(monkeypatch):
    """The app's variables go through the library's one reader: the same
    warning, the same fall back to the default."""
    from ui import training, trust

    monkeypatch.setenv(training.WORKERS_VARIABLE, "-2")
    with pytest.warns(UserWarning, match="BUDGETDAG_WORKERS='-2' is not a positive"):
        assert training.app_workers() >= 1
    monkeypatch.setenv(trust.TRUST_PICKLES_ENV, "yes")
    with pytest.warns(UserWarning, match="BUDGETDAG_TRUST_PICKLES='yes' is not 0 or 1"):
        assert trust.pickles_allowed() is False
    monkeypatch.setenv(trust.TRUST_PICKLES_ENV, "1")
    assert trust.pickles_allowed() is True


@pytest.fixture(scope="module")
def many_sensor_model():
    """14 one-column sensors (beyond the full DAG's): the chain and the routed
    DAG (x0 says which of x1, x2 carries the class) are built on one
    any-subset bank, one kept."""
    import numpy as np
    import pandas as pd

    from budgetdag_core import BudgetDAGClassifier, SensorSpec

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(240, 14)), columns=[f"x{i}" for i in range(14)])
    y = np.where(X.x0 > 0, X.x1 > 0, X.x2 > 0).astype(int)
    spec = SensorSpec.per_column(list(X.columns))
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    assert len(model.strategy_banks_) > 1
    return model, X


def test_a_slim_many_sensor_model_keeps_only_what_predicts(many_sensor_model):
    """As a slim policy file (``persist.policy_bundle``): the kept bank
    without its growth and fold bookkeeping, no other strategy's bank; it
    predicts as the model does, and the full snapshot keeps everything."""
    from budgetdag_core.persist import TRAINING_ONLY_ATTRS

    model, X = many_sensor_model
    full = store.encode({"run": model})
    slim = store.encode({"run": model}, slim=True)
    assert len(slim) < len(full) / 2
    back = store.decode(slim)["run"]
    assert back.strategy_banks_ is None
    assert not any(hasattr(back.bank_, attr) for attr in TRAINING_ONLY_ATTRS)
    assert (back.predict(X) == model.predict(X)).all()
    assert back.strategy_ == model.strategy_
    whole = store.decode(full)["run"]
    assert list(whole.strategy_banks_) == list(model.strategy_banks_)
    assert whole.bank_ is whole.strategy_banks_[model.strategy_]  # one object
    # The fitted model itself is untouched.
    assert model.strategy_banks_ is not None
    assert hasattr(model.bank_, "sparse_growth_")
