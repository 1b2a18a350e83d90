"""Files a study writes: the checkpoint's lock never follows a link, outputs that are not
regular files (FIFOs, devices, links) are written through or refused, never replaced."""

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from kmtests import cli as _cli
from kmtests.power import CheckpointError, power_curve

KW = dict(sample_sizes=[8], effects=[0.5], repetitions=2, n_resamples=19, rng=4)
ROOT = Path(__file__).resolve().parents[1]
STUDY = ["power", "--scenario", "linear", "--n", "8", "--reps", "2", "--n-resamples", "19",
         "--seed", "1"]


def _reader(path):
    """Read a FIFO in a thread (a writer blocks until a reader opens it)."""
    got = []
    thread = threading.Thread(target=lambda: got.append(Path(path).read_text()), daemon=True)
    thread.start()
    return thread, got


# -- (a) the lock ------------------------------------------------------------------------
def test_a_symlinked_lock_is_refused_and_its_target_left_alone(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("precious")
    ck = tmp_path / "s.csv"
    os.symlink(victim, tmp_path / "s.csv.lock")
    with pytest.raises(CheckpointError, match=r"lock file .*s\.csv\.lock of checkpoint .*s\.csv "
                                              r"is a symbolic link, not a regular file; "
                                              r"remove it"):
        power_curve("linear", checkpoint=ck, **KW)
    assert victim.read_text() == "precious"
    assert (tmp_path / "s.csv.lock").is_symlink() and not ck.exists()


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_lock_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    lock = tmp_path / "s.csv.lock"
    os.mkfifo(lock) if kind == "fifo" else lock.mkdir()
    what = r"a FIFO \(named pipe\)" if kind == "fifo" else "a directory"
    with pytest.raises(CheckpointError, match=f"lock file .* is {what}, not a regular file"):
        power_curve("linear", checkpoint=tmp_path / "s.csv", **KW)


# -- (b) checkpoints that are not regular files -------------------------------------------
def test_a_fifo_checkpoint_is_refused_not_replaced(tmp_path):
    ck = tmp_path / "s.csv"
    os.mkfifo(ck)
    with pytest.raises(CheckpointError, match=r"checkpoint .*s\.csv is a FIFO \(named pipe\), "
                                              r"not a regular file"):
        power_curve("linear", checkpoint=ck, **KW)
    assert stat.S_ISFIFO(os.lstat(ck).st_mode)


def test_a_checkpoint_through_a_symlink_keeps_the_link(tmp_path):
    target, link = tmp_path / "real.csv", tmp_path / "s.csv"
    os.symlink(target, link)  # dangling: the study creates the target
    power_curve("linear", checkpoint=link, **KW)
    # adding an estimator rewrites the file: the link's target, not the link
    res = power_curve("linear", estimators=["kme", "skmse"], checkpoint=link, **KW)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(pd.read_csv(target, comment="#")) == len(res.raw) == 4


# -- (b) outputs ------------------------------------------------------------------------------
def test_output_modes(tmp_path):
    from kmtests.studies._checkpoint import output_mode

    regular, link, fifo = tmp_path / "r.csv", tmp_path / "l.csv", tmp_path / "f"
    regular.write_text("x")
    os.symlink(regular, link)
    os.mkfifo(fifo)
    assert output_mode(tmp_path / "new.csv") == "replace"
    assert output_mode(regular) == output_mode(link) == "replace"
    assert output_mode(fifo) == "through"
    assert output_mode(os.devnull) in ("through", "stdout", "stderr")
    with pytest.raises(ValueError, match=r"is a directory, not a file that can be written"):
        output_mode(tmp_path)
    os.symlink(tmp_path, tmp_path / "d")
    with pytest.raises(ValueError, match=r"d is a directory \(through a symbolic link\)"):
        output_mode(tmp_path / "d")


def test_write_output_keeps_links_and_writes_fifos_through(tmp_path):
    from kmtests.studies._checkpoint import write_output

    regular, link, fifo = tmp_path / "r.csv", tmp_path / "l.csv", tmp_path / "f"
    regular.write_text("old")
    os.symlink(regular, link)
    write_output(link, "new\n")
    assert link.is_symlink() and regular.read_text() == "new\n"
    os.mkfifo(fifo)
    thread, got = _reader(fifo)
    write_output(fifo, b"bytes\n")
    thread.join(10)
    assert got == ["bytes\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_cli_out_to_a_fifo_is_written_through(tmp_path, capsys):
    fifo = tmp_path / "table.fifo"
    os.mkfifo(fifo)
    thread, got = _reader(fifo)
    assert _cli.main([*STUDY, "--out", str(fifo)]) == 0
    thread.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # not replaced by a regular file
    assert got and got[0].startswith("scenario,test,estimator,n,effect,alpha,")
    assert f"table written to {fifo}" in capsys.readouterr().out


def test_cli_out_through_a_symlink_keeps_the_link(tmp_path, capsys):
    target, link = tmp_path / "t.csv", tmp_path / "latest.csv"
    target.write_text("old")
    os.symlink(target, link)
    assert _cli.main([*STUDY, "--out", str(link)]) == 0
    assert link.is_symlink() and pd.read_csv(target)["n"].tolist() == [8]


def test_cli_out_naming_standard_output_appends_to_it(tmp_path):
    """``--out /dev/stdout`` (here: a link to the file the command's output goes to): the
    table follows the report in that file; the link and the file are kept."""
    captured, link = tmp_path / "captured.txt", tmp_path / "stdout-link"
    os.symlink(captured, link)
    with open(captured, "w") as fh:
        subprocess.run([sys.executable, "-m", "kmtests", *STUDY, "--out", str(link)],
                       stdout=fh, check=True, cwd=ROOT)
    assert link.is_symlink() and os.readlink(link) == str(captured)
    text = captured.read_text()
    report = text.index("Power study: linear")
    table = text.index("scenario,test,estimator,n,effect,alpha,")
    assert report < table


def test_cli_out_to_a_directory_link_is_refused_before_the_study(tmp_path, capsys, monkeypatch):
    import kmtests.power

    monkeypatch.setattr(kmtests.power, "power_curve", lambda *a, **k: pytest.fail("ran"))
    os.symlink(tmp_path, tmp_path / "d")
    rc = _cli.main([*STUDY, "--out", str(tmp_path / "d")])
    err = capsys.readouterr().err
    assert rc == 2 and "--out " in err and "is a directory (through a symbolic link)" in err
