"""Replicate MKME Fig. 3: two-sample power and level on Gaussian mixtures.

The paper (MKME §5.2.1) reports MMD two-sample power and type-I error on
"randomly generated" Gaussian mixtures of "different dimensions", 500 trials,
1000 permutations, alpha = 0.05, for KME, S-KMSE, F-KMSE, MKME, MMKME; the
sizes, dimensions and generator are not stated (PAPERS.md §2.4 item 6), and
the figure gives no numbers. Our design: the ``gaussian_mixtures`` scenario
(a fresh random mixture of 4 Gaussians in d = 5 from the papers' generator
per data set; the second sample's means shifted by `effect` along one axis;
effect 0 = level), n in {10, 20, 50, 100} per sample, effect in {0, 4}.

Run: python benchmarks/replications/mkme_fig3.py [--reps 300] [--B 199] [--n-jobs 2]
"""

from __future__ import annotations

import argparse
import time

from kmtests.power import power_curve

ESTIMATORS = ["kme", "skmse", "fkmse", "mkme", "mmkme"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--B", type=int, default=199)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20163)
    ap.add_argument("--plot", default="benchmarks/results/mkme_fig3.png")
    args = ap.parse_args()
    t0 = time.time()
    res = power_curve("gaussian_mixtures", estimators=ESTIMATORS, sample_sizes=[10, 20, 50, 100],
                      effects=[0.0, 4.0], repetitions=args.reps, n_resamples=args.B,
                      rng=args.seed, n_jobs=args.n_jobs,
                      checkpoint="benchmarks/results/mkme_fig3_raw.csv")
    tab = res.table()
    tab.to_csv("benchmarks/results/mkme_fig3.csv", index=False)
    print(f"{args.reps} repetitions, B = {args.B}, alpha = 0.05, {time.time() - t0:.0f} s\n")
    for eff, label in ((0.0, "level (effect 0)"), (4.0, "power (effect 4)")):
        sub = tab[tab["effect"] == eff]
        print(f"{label}:")
        print("| n | " + " | ".join(ESTIMATORS) + " |")
        print("|---|" + "---|" * len(ESTIMATORS))
        for n, g in sub.groupby("n"):
            cells = [f"{r['power']:.3f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
                     for _, r in g.set_index("estimator").loc[ESTIMATORS].iterrows()]
            print(f"| {n} | " + " | ".join(cells) + " |")
        print()
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        res_power = power_curve("gaussian_mixtures", estimators=ESTIMATORS,
                                sample_sizes=[10, 20, 50, 100], effects=[4.0],
                                repetitions=args.reps, n_resamples=args.B, rng=args.seed,
                                checkpoint="benchmarks/results/mkme_fig3_raw.csv")
        res_power.plot(ax=axes[0])
        axes[0].set_title("power, effect 4")
        res_level = power_curve("gaussian_mixtures", estimators=ESTIMATORS,
                                sample_sizes=[10, 20, 50, 100], effects=[0.0],
                                repetitions=args.reps, n_resamples=args.B, rng=args.seed,
                                checkpoint="benchmarks/results/mkme_fig3_raw.csv")
        res_level.plot(ax=axes[1])
        axes[1].set_title("level (effect 0)")
        axes[1].set_ylim(-0.01, 0.2)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
