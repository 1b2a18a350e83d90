"""Install + demo: the README's first command, timed in a fresh directory.

Run from the repository root (it never touches the checkout's ``.venv``)::

    .venv/bin/python benchmarks/bench_install.py              # ~2-3 min
    .venv/bin/python benchmarks/bench_install.py --no-heavy   # the light command only

The README's first shell command (``python3 -m venv .venv && .venv/bin/pip install -q .
&& .venv/bin/kmtests demo``) runs, part by part, in a copy of the package's sources in a
temporary directory, in these cases:

* ``light, warm cache``: as written, with pip's cache as this machine has it (what a
  user re-installing sees);
* ``light, no cache``: ``pip install --no-cache-dir``: every wheel downloaded again;
* ``heavy, warm cache``: the former first command, ``pip install -q -e ".[test,docs]"``
  (the extras of the test command), then the demo.

For each: the wall time of each part (``venv``, ``install``, the first ``kmtests
demo`` of the fresh install, which compiles the numba code and fills its cache, and a
second demo), the total of the command, the size of the virtual environment and the
number of packages in it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _benchutil as bu  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: what the sdist holds (MANIFEST.in): enough to install the package
SOURCES = ["kmtests", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "CHANGELOG.md"]


def readme_first_command() -> str:
    """The first ``sh`` block of the README (tests/test_project.py reads it alike)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    return [lines[i + 1] for i, line in enumerate(lines) if line.strip() == "```sh"][0]


def copy_sources(dest: Path) -> None:
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest / name)


def du_mb(path: Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total / 2**20


def run_case(label: str, parts: list[str], max_wait: float) -> dict:
    bu.wait_quiet(label, max_wait)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with tempfile.TemporaryDirectory(prefix="kmtests-bench-install-") as tmp:
        work = Path(tmp)
        copy_sources(work)
        times: dict[str, float] = {}
        names = ["venv", "install", "demo"]
        for name, part in zip(names, parts):
            t = time.perf_counter()
            proc = subprocess.run(["bash", "-c", part], cwd=work, env=env,
                                  capture_output=True, text=True)
            times[name] = time.perf_counter() - t
            if proc.returncode != 0:
                raise RuntimeError(f"{label}: {part!r} failed:\n{proc.stderr[-3000:]}")
        t = time.perf_counter()
        subprocess.run(["bash", "-c", parts[-1]], cwd=work, env=env, check=True,
                       capture_output=True)
        times["demo_again"] = time.perf_counter() - t
        pkgs = subprocess.run([str(work / ".venv/bin/python"), "-m", "pip", "list",
                               "--format=json"], capture_output=True, text=True, check=True)
        return {"label": label, **times,
                "total": times["venv"] + times["install"] + times["demo"],
                "size_mb": du_mb(work / ".venv"),
                "packages": len(json.loads(pkgs.stdout)), "command": " && ".join(parts)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-heavy", action="store_true",
                    help="skip the install of the test and docs extras")
    ap.add_argument("--max-wait", type=float, default=20.0,
                    help="seconds to wait for other processes to go idle before each case")
    ap.add_argument("--json", default="bench_install.json")
    args = ap.parse_args(argv)

    info = bu.machine_summary()
    bu.print_machine(info)
    command = readme_first_command()
    parts = command.split(" && ")
    if len(parts) != 3 or "pip install" not in parts[1] or "kmtests demo" not in parts[2]:
        raise SystemExit(f"unexpected first README command: {command!r}")
    print(f"\nthe README's first command: {command}")
    cases = [("light, warm cache", parts),
             ("light, no cache", [parts[0], parts[1].replace("pip install",
                                                             "pip install --no-cache-dir"),
                                  parts[2]])]
    if not args.no_heavy:
        cases.append(("heavy, warm cache", [parts[0], '.venv/bin/pip install -q -e '
                                            '".[test,docs]"', parts[2]]))
    results = [run_case(label, p, args.max_wait) for label, p in cases]

    print("\n=== install + demo, seconds (wall) ===")
    head = (f"{'case':20s} {'venv':>6s} {'install':>8s} {'demo':>6s} {'total':>7s} "
            f"{'demo again':>10s} {'size MB':>8s} {'packages':>8s}")
    print(head)
    print("-" * len(head))
    for r in results:
        print(f"{r['label']:20s} {r['venv']:6.1f} {r['install']:8.1f} {r['demo']:6.1f} "
              f"{r['total']:7.1f} {r['demo_again']:10.1f} {r['size_mb']:8.0f} "
              f"{r['packages']:8d}")
    bu.check_quiet("end")
    if args.json:
        path = bu.save_json(args.json, {"machine": info, "results": results,
                                        "time": time.strftime("%Y-%m-%d %H:%M:%S")})
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
