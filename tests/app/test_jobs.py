"""ui.jobs: long work in a bounded pool of worker processes, with a queue,
progress, Stop and errors.

The work functions live at module level: a worker process imports this
module to rebuild them (as it imports ``ui.training`` for the app's jobs).
Gates are files, since the work runs in another process.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from pathlib import Path

import pytest

from ui import jobs

WAIT = 120  # seconds; a loaded 2-core machine starts a worker in a few


def steps(n: int, gate: str | None, progress) -> str:
    for i in range(1, n + 1):
        while gate is not None and not Path(gate).exists():
            time.sleep(0.02)
        progress("bank", i, n)
    return f"result of {n} steps"


def pid(progress) -> int:
    return os.getpid()


def fail(message: str, progress) -> None:
    raise ValueError(message)


def crash(progress) -> None:
    os._exit(3)  # as if the kernel ended the worker (e.g. out of memory)


def silent(gate: str, progress) -> str:
    """Long work without progress steps: Stop cannot reach it cooperatively."""
    progress("bank", 0, 1)
    while not Path(gate).exists():
        time.sleep(0.02)
    return "never"


def work(fn, *args):
    return functools.partial(fn, *args)


@pytest.fixture
def gate(tmp_path) -> Path:
    return tmp_path / "go"


@pytest.fixture
def one_worker():
    pool = jobs.Pool(1)
    yield pool
    pool.close()


def test_a_job_reports_progress_and_its_result():
    job = jobs.Job(what="test", label="Testing", work=work(steps, 10, None)).start()
    assert job.wait(WAIT)
    assert job.status == jobs.DONE and job.result == "result of 10 steps"
    assert job.fraction == 1.0 and job.error is None
    assert job.elapsed() >= 0 and job.remaining() is None


def test_the_work_runs_in_another_process_and_the_worker_stays():
    first = jobs.Job(what="test", label="pid", work=work(pid)).start()
    second = jobs.Job(what="test", label="pid", work=work(pid)).start()
    assert first.wait(WAIT) and second.wait(WAIT)
    assert first.result != os.getpid()
    if jobs.pool().size == 1:
        assert first.result == second.result  # no new process per job


def test_work_that_cannot_be_sent_fails_in_words():
    job = jobs.Job(what="test", label="t", work=lambda progress: 1).start()
    assert job.wait(WAIT) and job.status == jobs.FAILED
    assert "cannot be sent to a worker process" in str(job.error)


def test_progress_reaches_the_server_while_the_work_runs(gate):
    job = jobs.Job(what="t", label="Testing", work=work(steps, 4, str(gate)))
    job.start()
    deadline = time.monotonic() + WAIT
    while job.status != jobs.RUNNING and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.running and job.fraction < 1.0
    gate.touch()
    assert job.wait(WAIT) and job.status == jobs.DONE
    assert "Fitting the classifier bank: 4 of 4 fits" in job.text


def test_stop_ends_the_work_at_its_next_step(gate):
    job = jobs.Job(what="test", label="Testing", work=work(steps, 50, str(gate)))
    job.start()
    job.stop()
    assert job.stopping or job.status == jobs.STOPPED
    gate.touch()
    assert job.wait(WAIT)
    assert job.status == jobs.STOPPED and job.result is None


def test_errors_are_kept_for_the_page():
    job = jobs.Job(what="test", label="Testing", work=work(fail, "column 'a' is empty"))
    assert job.start().wait(WAIT)
    assert job.status == jobs.FAILED and "column 'a'" in str(job.error)
    assert isinstance(job.error, ValueError)
    assert "ValueError" in job.trace  # the worker's traceback, for the log


def test_a_worker_that_dies_fails_its_job_and_is_replaced(one_worker):
    job = one_worker.submit(jobs.Job(what="t", label="Crash", work=work(crash)))
    assert job.wait(WAIT) and job.status == jobs.FAILED
    assert "ended unexpectedly (exit code 3)" in str(job.error)
    after = one_worker.submit(jobs.Job(what="t", label="t", work=work(steps, 2, None)))
    assert after.wait(WAIT) and after.status == jobs.DONE


def test_a_job_deaf_to_stop_has_its_worker_ended(one_worker, gate, monkeypatch):
    monkeypatch.setattr(jobs, "STOP_GRACE", 0.5)
    job = one_worker.submit(jobs.Job(what="t", label="t", work=work(silent, str(gate))))
    deadline = time.monotonic() + WAIT
    while job.fraction == 0 and job.text != "Fitting the classifier bank: 0 of 1 fits":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    started = time.monotonic()
    job.stop()
    assert job.wait(30) and job.status == jobs.STOPPED
    assert time.monotonic() - started < 10
    after = one_worker.submit(jobs.Job(what="t", label="t", work=work(steps, 1, None)))
    assert after.wait(WAIT) and after.status == jobs.DONE


def test_jobs_beyond_the_workers_wait_in_line(one_worker, gate):
    first = one_worker.submit(
        jobs.Job(what="t", label="First", work=work(steps, 3, str(gate)))
    )
    deadline = time.monotonic() + WAIT
    while first.queued:  # until the worker has taken it
        assert time.monotonic() < deadline
        time.sleep(0.02)
    second = one_worker.submit(
        jobs.Job(what="t", label="Second", work=work(steps, 1, None))
    )
    third = one_worker.submit(
        jobs.Job(what="t", label="Third", work=work(steps, 1, None))
    )
    assert (second.position, third.position) == (1, 2)
    assert second.queued and second.running and second.remaining() is None
    # Stop on a waiting job drops it at once; the one behind moves up.
    second.stop()
    assert second.status == jobs.STOPPED and second.started is None
    assert third.position == 1
    gate.touch()
    assert first.wait(WAIT) and third.wait(WAIT)
    assert (first.status, third.status) == (jobs.DONE, jobs.DONE)
    assert third.started >= first.finished - 0.5  # one at a time
    assert third.waited() > 0


def test_one_job_at_a_time_per_session(gate):
    token, other = "a" * 32, "b" * 32
    first = jobs.submit(
        token, jobs.Job(what="t", label="Training", work=work(steps, 3, str(gate)))
    )
    with pytest.raises(ValueError, match="Training is still running"):
        jobs.submit(token, jobs.Job(what="t", label="Again", work=work(steps, 1, None)))
    # Another session is not blocked, and does not see this session's job.
    second = jobs.submit(
        other, jobs.Job(what="t", label="Other", work=work(steps, 1, None))
    )
    assert jobs.current(other) is second and jobs.current(token) is first
    gate.touch()
    assert first.wait(WAIT) and second.wait(WAIT)
    jobs.forget(token, first)
    jobs.forget(other, second)
    assert jobs.current(token) is None and jobs.current(None) is None


def test_the_estimate_follows_the_progress():
    job = jobs.Job(what="t", label="t", work=work(steps, 1, None))
    job.status, job.started = jobs.RUNNING, time.monotonic() - 2
    job.fraction = 0.5
    assert job.remaining() == pytest.approx(job.elapsed(), rel=0.5)


def test_the_sidebar_looks_more_often_at_a_job_that_ends_soon():
    from ui import widgets  # here: the workers import this module

    def job(estimate):
        return jobs.Job("t", "t", work(steps, 1, None), estimate=estimate)

    assert widgets.poll_seconds(job(10.0)) == widgets.FAST_POLL_SECONDS
    assert widgets.poll_seconds(job(600.0)) == widgets.POLL_SECONDS
    assert widgets.poll_seconds(job(None)) == widgets.POLL_SECONDS  # unknown
    late = job(600.0)
    late.status, late.started = jobs.RUNNING, time.monotonic() - 590
    late.fraction = 0.99
    late.remaining()  # the sidebar's time left: a few seconds
    assert widgets.poll_seconds(late) == widgets.FAST_POLL_SECONDS


def test_the_sidebar_waits_for_the_end_of_a_job_that_is_almost_done():
    from ui import widgets

    job = jobs.Job("t", "t", work(steps, 1, None), estimate=20.0)
    assert not widgets.ends_before_next_look(job, 1.0)  # queued: no time left
    job.status, job.started = jobs.RUNNING, time.monotonic() - 1
    job.fraction = 0.05
    assert not widgets.ends_before_next_look(job, 1.0)
    job.started, job.fraction = time.monotonic() - 19.9, 0.998
    assert widgets.ends_before_next_look(job, 1.0)
    assert not widgets.ends_before_next_look(job, 0.0)


def test_a_running_job_follows_its_session_to_a_new_token(gate):
    old, new = "c" * 32, "d" * 32
    job = jobs.submit(
        old, jobs.Job(what="t", label="Training", work=work(steps, 2, str(gate)))
    )
    jobs.rekey(old, new)
    assert jobs.current(new) is job and jobs.current(old) is None
    assert job.running
    gate.touch()
    assert job.wait(WAIT) and job.status == jobs.DONE
    jobs.forget(new, job)


def test_a_shared_job_is_collected_by_each_session(gate):
    one, two = "e" * 32, "f" * 32
    job = jobs.submit(
        one, jobs.Job(what="t", label="Training", work=work(steps, 1, str(gate)))
    )
    jobs.share(one, two)
    assert jobs.current(one) is job and jobs.current(two) is job
    gate.touch()
    assert job.wait(WAIT)
    jobs.forget(one, job)
    assert jobs.current(two) is job  # still there for the other tab
    jobs.forget(two, job)
    assert jobs.current(two) is None


def echo(value, progress) -> dict:
    return {"same": value, "copy": [value]}


def test_shared_objects_come_back_as_themselves():
    bank = {"weights": list(range(1000))}  # stands for a model's bank
    job = jobs.Job(what="t", label="t", work=work(echo, bank), shared=(bank,))
    assert job.start().wait(WAIT) and job.status == jobs.DONE
    assert job.result["same"] is bank and job.result["copy"][0] is bank
    other = jobs.Job(what="t", label="t", work=work(echo, bank)).start()
    assert other.wait(WAIT) and other.result["same"] == bank
    assert other.result["same"] is not bank  # not shared: a copy


def candidates(progress):
    """A result with many-sensor candidates that keep a held-out growth."""
    from budgetdag_core.strategies import StrategyBanks

    banks = StrategyBanks({"chain": "bank"})
    banks.add_held_out({("chain", "rows"): "growth"})
    return {"candidates": banks, "twice": [banks]}


def test_held_out_growths_follow_the_result():
    """The result comes back without its held-out growths, which follow in
    a message of their own into the same candidates (the next refit's)."""
    job = jobs.Job(what="t", label="t", work=work(candidates)).start()
    assert job.wait(WAIT) and job.status == jobs.DONE
    banks = job.result["candidates"]
    assert job.result["twice"][0] is banks
    deadline = time.monotonic() + WAIT
    while not banks._held_out and time.monotonic() < deadline:
        time.sleep(0.02)
    assert banks._held_out == {("chain", "rows"): "growth"}
    after = jobs.Job(what="t", label="pid", work=work(pid)).start()
    assert after.wait(WAIT) and after.status == jobs.DONE  # the worker goes on


def test_the_estimate_learns_which_workers_have_run_a_job(one_worker):
    from ui import estimate

    job = one_worker.submit(jobs.Job(what="t", label="pid", work=work(pid)))
    assert job.wait(WAIT) and job.status == jobs.DONE
    deadline = time.monotonic() + WAIT  # the slot records it after the result
    while job.result not in estimate._WARM_WORKERS:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    crashed = one_worker.submit(jobs.Job(what="t", label="Crash", work=work(crash)))
    assert crashed.wait(WAIT) and crashed.status == jobs.FAILED
    # The ended worker's replacement will start cold.
    while job.result in estimate._WARM_WORKERS:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def killed(progress) -> None:
    os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer does


def test_a_worker_killed_by_the_system_is_named_and_replaced_at_once(one_worker):
    job = one_worker.submit(jobs.Job(what="t", label="Kill", work=work(killed)))
    assert job.wait(WAIT) and job.status == jobs.FAILED
    assert isinstance(job.error, jobs.WorkerLost)
    assert "killed (SIGKILL, as the system does when it runs out of memory)" in str(
        job.error
    )
    again = one_worker.submit(job.again())  # a retry of the same work
    assert again is not job and again.label == "Kill"
    assert again.wait(WAIT) and isinstance(again.error, jobs.WorkerLost)
    after = one_worker.submit(jobs.Job(what="t", label="pid", work=work(pid)))
    assert after.wait(WAIT) and after.status == jobs.DONE
