"""The memory guard: machine, cgroup (v1, v2) and address-space limits; check_memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kmtests import _guards
from kmtests._guards import (address_space_available, available_memory, cgroup_available,
                             check_memory, machine_available)

MB = 10**6


def _fs(files):
    """A reader over a dict of path -> contents (None for any other path)."""
    return lambda path: files.get(path)


MOUNTS_V2 = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
MOUNTS_V1 = ("25 23 0:22 / /sys/fs/cgroup/cpu rw shared:5 - cgroup cgroup rw,cpu\n"
             "26 23 0:23 /docker/abc /sys/fs/cgroup/memory rw shared:6 - cgroup cgroup "
             "rw,memory\n")


def test_machine_reads_memavailable():
    meminfo = "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n"
    assert machine_available(_fs({"/proc/meminfo": meminfo})) == 8000000 * 1024


def test_cgroup_v2_least_over_the_cgroup_and_its_ancestors():
    base = "/sys/fs/cgroup/user.slice"
    files = {
        "/proc/self/cgroup": "0::/user.slice/job\n",
        "/proc/self/mountinfo": MOUNTS_V2,
        f"{base}/job/memory.max": "1000000000\n",
        f"{base}/job/memory.current": "600000000\n",
        f"{base}/job/memory.stat": "anon 500000000\ninactive_file 100000000\nactive_file 0\n",
    }
    # the job's own limit: 1e9 - (6e8 - 1e8 reclaimable cache) = 5e8
    assert cgroup_available(_fs(files)) == 500 * MB
    files[f"{base}/memory.max"] = "800000000\n"  # the slice above binds harder
    files[f"{base}/memory.current"] = "700000000\n"
    assert cgroup_available(_fs(files)) == 100 * MB
    files[f"{base}/memory.max"] = "max\n"
    files[f"{base}/job/memory.max"] = "max\n"
    assert cgroup_available(_fs(files)) is None


def test_cgroup_v1_in_a_container_and_unlimited():
    files = {
        "/proc/self/cgroup": "5:cpu:/docker/abc\n4:memory:/docker/abc\n0::/\n",
        "/proc/self/mountinfo": MOUNTS_V1,
        # the mount's root is the container's cgroup: its files are at the mount point
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "2000000000\n",
        "/sys/fs/cgroup/memory/memory.usage_in_bytes": "1500000000\n",
        "/sys/fs/cgroup/memory/memory.stat": "cache 9\ntotal_inactive_file 500000000\n",
    }
    assert cgroup_available(_fs(files)) == 1000 * MB
    files["/sys/fs/cgroup/memory/memory.limit_in_bytes"] = "9223372036854771712\n"
    assert cgroup_available(_fs(files)) is None


def test_cgroup_hybrid_takes_the_least_and_defaults_without_mountinfo():
    files = {
        "/proc/self/cgroup": "4:memory:/a\n0::/b\n",
        "/sys/fs/cgroup/memory/a/memory.limit_in_bytes": "300000000",
        "/sys/fs/cgroup/memory/a/memory.usage_in_bytes": "100000000",
        "/sys/fs/cgroup/b/memory.max": "900000000",
        "/sys/fs/cgroup/b/memory.current": "100000000",
    }
    assert cgroup_available(_fs(files)) == 200 * MB  # v1 at 2e8, v2 at 8e8
    assert cgroup_available(_fs({})) is None


def test_address_space_is_the_limit_minus_the_virtual_size():
    status = "Name:\tpython\nVmPeak:\t  2000000 kB\nVmSize:\t  1000000 kB\n"
    read = _fs({"/proc/self/status": status})
    assert address_space_available(read, lambda: 4_000_000_000) == 4_000_000_000 - 1024 * 10**6
    assert address_space_available(read, lambda: None) is None


def test_available_memory_is_the_least_limit(monkeypatch):
    monkeypatch.setattr(_guards, "machine_available", lambda: 8_000 * MB)
    monkeypatch.setattr(_guards, "cgroup_available", lambda: 500 * MB)
    monkeypatch.setattr(_guards, "address_space_available", lambda: None)
    assert available_memory() == 500 * MB
    monkeypatch.setattr(_guards, "address_space_available", lambda: 200 * MB)
    assert available_memory() == 200 * MB
    monkeypatch.setattr(_guards, "address_space_available", lambda: -5)  # already over
    assert available_memory() == 0
    for name in ("machine_available", "cgroup_available", "address_space_available"):
        monkeypatch.setattr(_guards, name, lambda: None)
    assert available_memory() is None


def test_check_memory_names_the_need_and_the_subject(monkeypatch):
    monkeypatch.setattr(_guards, "available_memory", lambda: 10 * MB)
    monkeypatch.setattr(_guards, "UNCHECKED_BYTES", 0)
    check_memory(8 * MB, "a matrix", "Do less.")  # 0.9 x 10 MB is enough
    with pytest.raises(MemoryError, match=r"^this test needs about 20.0 MB of memory \(a "
                       r"matrix\), more than the 10.0 MB available. Do less.$"):
        check_memory(20 * MB, "a matrix", "Do less.")
    with pytest.raises(MemoryError, match="^this fit needs about"):
        check_memory(20 * MB, "a matrix", "Do less.", subject="this fit")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_address_space_limit_refuses_a_test_up_front():
    """Under ``ulimit -v`` the test is refused with the need, before numpy fails."""
    code = textwrap.dedent("""
        import resource
        import numpy as np
        import kmtests
        from kmtests._guards import available_memory, address_space_available

        x = np.random.default_rng(0).normal(size=(4000, 2))
        y = x + 0.1
        size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
        limit = size + 300 * 10**6
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        avail = available_memory()
        assert 0 < avail <= 300 * 10**6, avail
        assert avail == min(address_space_available(), avail)
        try:
            kmtests.two_sample_test(x, y, engine="exact", n_resamples=9, rng=0)
        except MemoryError as exc:
            print("REFUSED:", exc)
        else:
            print("RAN")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("REFUSED: this test needs about"), out.stdout + out.stderr
    assert "8000 x 8000 pooled Gram matrix" in out.stdout
    assert "MB available" in out.stdout


def test_small_needs_are_not_checked(monkeypatch):
    # reading the limits costs a small test most of its time; below UNCHECKED_BYTES the
    # guard does not read them (and a need above it still is checked)
    def boom():
        raise AssertionError("read the limits")

    monkeypatch.setattr(_guards, "available_memory", boom)
    check_memory(_guards.UNCHECKED_BYTES - 1, "a matrix", "Do less.")
    with pytest.raises(AssertionError, match="read the limits"):
        check_memory(_guards.UNCHECKED_BYTES, "a matrix", "Do less.")
