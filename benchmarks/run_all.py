"""Run all kmtests benchmarks, one after the other, in fresh processes.

From the repository root::

    .venv/bin/python benchmarks/run_all.py            # ~5-8 min on a 2-core machine
    .venv/bin/python benchmarks/run_all.py --full     # + hyppo MMD with all B perms (~+5 min)
    .venv/bin/python benchmarks/run_all.py --quick    # small sizes, no hyppo MMD at large n
    .venv/bin/python benchmarks/run_all.py --log benchmarks/results/run.txt

JSON results go to ``benchmarks/results/`` (git-ignored). Run on an otherwise
idle machine: the scripts wait (up to a limit) for other processes to go idle
and print a warning when they did not.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="hyppo with all B permutations at n=1000 (no extrapolation there)")
    ap.add_argument("--quick", action="store_true", help="sizes 200 500 1000, 3 repeats")
    ap.add_argument("--no-hyppo", action="store_true")
    ap.add_argument("--log", help="also write the combined output to this file")
    args = ap.parse_args(argv)

    perm = [str(HERE / "bench_permutation.py")]
    cold = [str(HERE / "bench_cold_start.py")]
    if args.full:
        perm.append("--full")
    if args.quick:
        perm += ["--sizes", "200", "500", "1000", "--repeats", "3", "--hyppo-budget", "30"]
        cold += ["--repeats", "2"]
    if args.no_hyppo:
        perm.append("--no-hyppo")
        cold.append("--no-hyppo")

    log = open(args.log, "w") if args.log else None
    status = 0
    for cmd in (perm, cold):
        banner = f"\n##### {' '.join([Path(sys.executable).name, *cmd])}\n"
        print(banner, flush=True)
        if log:
            log.write(banner)
        proc = subprocess.Popen([sys.executable, *cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            if log:
                log.write(line)
        status = status or proc.wait()
    if log:
        log.close()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
