"""Reference MMDAgg weights from the authors' code (not part of kmtests).

Loads ``mmdagg/np.py`` of github.com/antoninschrab/mmdagg (MIT licence) as a file
(its package ``__init__`` imports jax, which this needs not) and records
``create_weights(N, kind)`` for N = 1..12 and the four kinds in
``weights_reference.json``, for ``tests/test_reference_authors.py``. Nothing of the
authors' code is copied; only the numbers are stored.

Run (numpy and scipy suffice)::

    python tests/reference/gen_weights.py --mmdagg /path/to/mmdagg-checkout
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mmdagg", required=True, help="a checkout of antoninschrab/mmdagg")
    ap.add_argument("--commit", default=None,
                    help="the checkout's commit, when it is not a git work tree")
    args = ap.parse_args()
    path = Path(args.mmdagg) / "mmdagg" / "np.py"
    spec = importlib.util.spec_from_file_location("mmdagg_np", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    commit = args.commit
    if commit is None:
        try:
            commit = subprocess.run(["git", "-C", args.mmdagg, "rev-parse", "HEAD"],
                                    capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "unknown"
    ref = {"source": f"antoninschrab/mmdagg mmdagg/np.py create_weights (commit {commit})",
           "weights": {kind: {str(n): [float(w) for w in module.create_weights(n, kind)]
                              for n in range(1, 13)}
                       for kind in ("uniform", "decreasing", "increasing", "centred")}}
    out = HERE / "weights_reference.json"
    out.write_text(json.dumps(ref, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
