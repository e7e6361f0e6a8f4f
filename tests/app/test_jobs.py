"""ui.jobs: long work in a worker thread, with progress, Stop and errors."""

from __future__ import annotations

import threading

import pytest

from ui import jobs


def steps(n: int, gate: threading.Event | None = None):
    def work(progress):
        for i in range(1, n + 1):
            if gate is not None:
                gate.wait(5)
            progress("bank", i, n)
        return "result"

    return work


def test_a_job_reports_progress_and_its_result():
    job = jobs.Job(what="test", label="Testing", work=steps(10)).start()
    assert job.wait(10)
    assert job.status == jobs.DONE and job.result == "result"
    assert job.fraction == 1.0 and job.error is None
    assert job.elapsed() >= 0 and job.remaining() is None


def test_stop_ends_the_work_at_its_next_step():
    gate = threading.Event()
    job = jobs.Job(what="test", label="Testing", work=steps(50, gate)).start()
    job.stop()
    assert job.stopping
    gate.set()
    assert job.wait(10)
    assert job.status == jobs.STOPPED and job.result is None


def test_errors_are_kept_for_the_page():
    def fail(progress):
        raise ValueError("column 'a' is empty")

    job = jobs.Job(what="test", label="Testing", work=fail).start()
    assert job.wait(10)
    assert job.status == jobs.FAILED and "column 'a'" in str(job.error)


def test_one_job_at_a_time_per_session():
    gate = threading.Event()
    token, other = "a" * 32, "b" * 32
    first = jobs.submit(
        token, jobs.Job(what="t", label="Training", work=steps(3, gate))
    )
    with pytest.raises(ValueError, match="Training is still running"):
        jobs.submit(token, jobs.Job(what="t", label="Again", work=steps(1)))
    # Another session is not blocked, and does not see this session's job.
    second = jobs.submit(other, jobs.Job(what="t", label="Other", work=steps(1)))
    assert jobs.current(other) is second and jobs.current(token) is first
    gate.set()
    assert first.wait(10) and second.wait(10)
    jobs.forget(token, first)
    jobs.forget(other, second)
    assert jobs.current(token) is None and jobs.current(None) is None


def test_the_estimate_follows_the_progress():
    job = jobs.Job(what="t", label="t", work=steps(1))
    job.fraction = 0.5
    assert job.remaining() == pytest.approx(job.elapsed(), rel=0.5)


def test_a_running_job_follows_its_session_to_a_new_token():
    gate = threading.Event()
    old, new = "c" * 32, "d" * 32
    job = jobs.submit(old, jobs.Job(what="t", label="Training", work=steps(2, gate)))
    jobs.rekey(old, new)
    assert jobs.current(new) is job and jobs.current(old) is None
    assert job.running
    gate.set()
    assert job.wait(10) and job.status == jobs.DONE
    jobs.forget(new, job)
