"""Checkpoint files of power studies: meaning of rows, integrity, interruption, locking."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kmtests
from kmtests.estimators import KME, SKMSE
from kmtests.power import CheckpointError, power_curve
from tests._slow_scenario import DELAY_ENV, SLOW_MEAN_SHIFT

KW = dict(sample_sizes=[8], effects=[0.5], n_resamples=19, rng=9)
ROOT = Path(__file__).resolve().parents[1]


class KMECopy(KME):
    name = "kme_copy"


def _rows(path):
    return pd.read_csv(path, comment="#")


def test_file_records_settings_and_reads_back(tmp_path):
    path = tmp_path / "study.csv"
    res = power_curve("variance_shift", repetitions=3, checkpoint=path, **KW)
    text = path.read_text()
    assert text.startswith("# kmtests power-study checkpoint")
    assert '"n_resamples":19' in text and '"entropy":9' in text
    assert f'"kmtests":"{kmtests.__version__}"' in text
    rows = _rows(path)
    assert len(rows) == 3 and set(rows["estimator"]) == {"kme"}
    np.testing.assert_array_equal(rows["pvalue"], res.raw["pvalue"])  # exact round trip
    assert not (tmp_path / "study.csv.lock").exists()  # the lock is released


def test_added_estimator_is_computed_not_dropped(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", estimators=["kme"], repetitions=4, checkpoint=path, **KW)
    both = power_curve("mean_shift", estimators=["kme", KMECopy()], repetitions=4,
                       checkpoint=path, **KW)
    assert (both.raw["estimator"] == "kme_copy").sum() == 4
    # a row computed later is the row computed with the others (common random numbers)
    fresh = power_curve("mean_shift", estimators=["kme", KMECopy()], repetitions=4, **KW)
    pd.testing.assert_frame_equal(both.raw, fresh.raw)
    p = both.raw.pivot_table(index="repetition", columns="estimator", values="pvalue")
    np.testing.assert_array_equal(p["kme"], p["kme_copy"])
    assert len(_rows(path)) == 8


def test_estimator_configuration_is_part_of_the_label(tmp_path):
    res = power_curve("mean_shift", estimators=["skmse", SKMSE(shrinkage=0.3)],
                      repetitions=2, **KW)
    assert res.estimators == ("skmse", "skmse(shrinkage=0.3)")
    with pytest.raises(ValueError, match=r"`estimators` must have distinct names; got \['kme', "
                                         r"'kme'\]"):
        power_curve("mean_shift", estimators=["kme", KME()], **KW)


def test_other_n_resamples_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=2, checkpoint=path, **{**KW, "n_resamples": 9})
    with pytest.raises(CheckpointError, match=r"study.csv was written with other settings "
                       r"than this call: n_resamples is 9 in the file but 999 in this call"):
        power_curve("mean_shift", repetitions=2, checkpoint=path, **{**KW, "n_resamples": 999})
    assert len(_rows(path)) == 2  # the file is left as it was


def test_other_seed_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r'seed is \{"entropy": 9, .*\} in the file but '
                                              r'\{"entropy": 10,'):
        power_curve("mean_shift", repetitions=2, checkpoint=path, **{**KW, "rng": 10})


def test_other_test_options_are_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)
    # options that only change the speed are not part of a row's meaning
    power_curve("mean_shift", repetitions=2, checkpoint=path, test_kwargs={"batch": 7}, **KW)
    with pytest.raises(CheckpointError, match=r'test_kwargs is \{\} in the file but '
                                              r'\{"kernel": "laplacian"\} in this call'):
        power_curve("mean_shift", repetitions=2, checkpoint=path,
                    test_kwargs={"kernel": "laplacian"}, **KW)


def test_other_scenario_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r'scenario is \{.*"name": "mean_shift".*\} in the '
                                              r'file but \{.*"name": "variance_shift"'):
        power_curve("variance_shift", repetitions=2, checkpoint=path, **KW)


def test_other_estimator_configuration_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", estimators={"s": SKMSE()}, repetitions=2, checkpoint=path, **KW)
    with pytest.raises(CheckpointError, match=r"estimator 's' is .*\"shrinkage\": null.* in the "
                                              r"file but .*\"shrinkage\": 0.3"):
        power_curve("mean_shift", estimators={"s": SKMSE(shrinkage=0.3)}, repetitions=2,
                    checkpoint=path, **KW)


def test_other_kmtests_version_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)
    monkeypatch.setattr(kmtests, "__version__", "99.0")
    with pytest.raises(CheckpointError, match=r'kmtests is "[^"]+" in the file but "99.0"'):
        power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)


def test_fresh_entropy_is_recorded_and_continued(tmp_path):
    path = tmp_path / "study.csv"
    first = power_curve("linear", sample_sizes=[8], repetitions=2, n_resamples=19,
                        checkpoint=path)
    assert first.seed is None and first.root_seed is not None
    assert f'"entropy":{first.root_seed.entropy}' in path.read_text()
    more = power_curve("linear", sample_sizes=[8], repetitions=4, n_resamples=19,
                       checkpoint=path)
    again = power_curve("linear", sample_sizes=[8], repetitions=4, n_resamples=19,
                        rng=first.root_seed)
    pd.testing.assert_frame_equal(more.raw, again.raw)
    assert "Root seed: entropy" in str(first.summary())


def test_truncated_file_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=3, checkpoint=path, **KW)
    data = path.read_bytes()
    path.write_bytes(data[:-5])  # the last row loses its end (e.g. a crash mid-write)
    with pytest.raises(CheckpointError, match=r"line 6 of checkpoint .*study.csv is truncated"):
        power_curve("mean_shift", repetitions=3, checkpoint=path, **KW)


def test_corrupt_row_is_refused(tmp_path):
    path = tmp_path / "study.csv"
    power_curve("mean_shift", repetitions=3, checkpoint=path, **KW)
    lines = path.read_text().split("\n")
    body, crc = lines[4].rsplit(",", 1)
    fields = body.split(",")
    fields[-1] = "0.0" + fields[-1]  # an edited p-value: still a number, wrong checksum
    lines[4] = ",".join(fields) + "," + crc
    path.write_text("\n".join(lines))
    with pytest.raises(CheckpointError, match=r"line 5 of checkpoint .*study.csv is truncated or "
                                              r"corrupt \(its checksum does not match\)"):
        power_curve("mean_shift", repetitions=3, checkpoint=path, **KW)


def test_plain_csv_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "raw.csv"
    power_curve("mean_shift", repetitions=2, **KW).to_csv(path)
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match=r"raw.csv is not a kmtests checkpoint file \(its "
                                              r"first line is 'scenario,test,n"):
        power_curve("mean_shift", repetitions=2, checkpoint=path, **KW)
    assert path.read_bytes() == before  # never overwritten


def test_keyboard_interrupt_keeps_finished_rows(tmp_path, monkeypatch):
    path = tmp_path / "study.csv"
    real, calls = kmtests.two_sample_test, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(kmtests.twosample, "two_sample_test", interrupted)
    with pytest.raises(KeyboardInterrupt):
        power_curve("mean_shift", repetitions=8, checkpoint=path, **KW)
    assert len(_rows(path)) == 4  # appended as each repetition finished
    monkeypatch.setattr(kmtests.twosample, "two_sample_test", real)
    resumed = power_curve("mean_shift", repetitions=8, checkpoint=path, **KW)  # lock released
    fresh = power_curve("mean_shift", repetitions=8, **KW)
    pd.testing.assert_frame_equal(resumed.raw, fresh.raw)


def test_resume_in_parallel_equals_serial(tmp_path):
    path = tmp_path / "study.csv"
    kw = dict(sample_sizes=[8, 12], effects=[0.0, 1.0], n_resamples=19, rng=4)
    power_curve("linear", repetitions=2, checkpoint=path, **kw)
    par = power_curve("linear", repetitions=4, checkpoint=path, n_jobs=2, **kw)
    serial = power_curve("linear", repetitions=4, **kw)
    pd.testing.assert_frame_equal(par.raw, serial.raw)


def test_sigkill_mid_study_then_resume_and_lock(tmp_path):
    path = tmp_path / "study.csv"
    kw = dict(sample_sizes=[8], effects=[0.5], repetitions=30, n_resamples=19, rng=3)
    script = ("import sys\nfrom kmtests.power import power_curve\n"
              "from tests._slow_scenario import SLOW_MEAN_SHIFT\n"
              f"power_curve(SLOW_MEAN_SHIFT, checkpoint=sys.argv[1], **{kw!r})\n")
    env = {**os.environ, DELAY_ENV: "0.25", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and len(_rows(path)) >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
        # a second process on the same file is refused while the first runs
        with pytest.raises(CheckpointError, match=rf"checkpoint .*study.csv is in use by another "
                                                  rf"process \(pid {proc.pid}, lock"):
            power_curve(SLOW_MEAN_SHIFT, checkpoint=path, **kw)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    done = len(_rows(path))
    assert 3 <= done < 30
    resumed = power_curve(SLOW_MEAN_SHIFT, checkpoint=path, **kw)
    fresh = power_curve(SLOW_MEAN_SHIFT, **kw)
    pd.testing.assert_frame_equal(resumed.raw, fresh.raw)
    assert len(_rows(path)) == 30


def test_without_file_locking_checkpoints_are_refused(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "fcntl", None)  # as on a platform without fcntl
    with pytest.raises(CheckpointError, match=r"checkpoint files need POSIX file locking "
                                              r"\(fcntl\), which this platform lacks"):
        power_curve("mean_shift", repetitions=2, checkpoint=tmp_path / "s.csv", **KW)
    assert not (tmp_path / "s.csv").exists()
