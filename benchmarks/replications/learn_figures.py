"""Make the figures of the kmtests.learn user-guide pages (docs/learn/*.png).

Each figure is small and seeded; the documentation build only includes the
PNG files. Run: python benchmarks/replications/learn_figures.py
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from kmtests.learn import (KernelMeanMatchingDensity, Normal, ParzenClassifier,  # noqa: E402
                           SupportMeasureMachine)

OUT = "docs/learn"


def density() -> None:
    gen = np.random.default_rng(1)
    x = np.concatenate([gen.normal(-2.0, 0.6, 12), gen.normal(1.5, 1.0, 18)])[:, None]
    t = np.linspace(-5, 5, 400)[:, None]
    truth = 0.4 * np.exp(-(t + 2) ** 2 / 0.72) / np.sqrt(0.72 * np.pi) \
        + 0.6 * np.exp(-(t - 1.5) ** 2 / 2) / np.sqrt(2 * np.pi)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(t, truth, "k--", lw=1.2, label="true density")
    for est, c in (("kme", "C0"), ("skmse", "C1"), ("mkme", "C2")):
        q = KernelMeanMatchingDensity(n_components=4, estimator=est, random_state=0).fit(x)
        ax.plot(t, np.exp(q.score_samples(t)), c, label=f"KMM, {est}")
    ax.plot(x[:, 0], np.zeros(len(x)) - 0.01, "|", color="0.3", ms=10)
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    ax.legend(frameon=False, fontsize=8)
    ax.set_title("Kernel mean matching, 4 components, n = 30", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{OUT}/density.png", dpi=110)


def kpca() -> None:
    df = pd.read_csv("benchmarks/results/learn_kpca.csv")
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    scen = list(dict.fromkeys(df["scenario"]))
    for k, ds in enumerate(dict.fromkeys(df["dataset"])):
        g = df[df["dataset"] == ds]
        base = g[g["scenario"] == "KPCA"].sort_values("rep")["error"].to_numpy()
        rel = [100 * np.mean(g[g["scenario"] == s].sort_values("rep")["error"].to_numpy()
                             / base - 1) for s in scen]
        ax.bar(np.arange(len(scen)) + 0.38 * k, rel, width=0.36, label=ds)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(np.arange(len(scen)) + 0.19, scen, fontsize=8)
    ax.set_ylabel("test error vs KPCA (%)")
    ax.legend(frameon=False, fontsize=8)
    ax.set_title("KPCA reconstruction error, 20 components, 10 splits", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{OUT}/kpca.png", dpi=110)


def parzen() -> None:
    gen = np.random.default_rng(3)
    X = np.vstack([gen.normal([-1, 0], 1.0, (8, 2)), gen.normal([1, 0.5], 1.0, (8, 2))])
    y = np.repeat([0, 1], 8)
    g1, g2 = np.meshgrid(np.linspace(-4, 4, 200), np.linspace(-3.5, 4, 200))
    grid = np.column_stack([g1.ravel(), g2.ravel()])
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    for est, c in (("kme", "C0"), ("skmse", "C1"), ("fkmse", "C2")):
        clf = ParzenClassifier(estimator=est, bandwidth=0.7).fit(X, y)
        ax.contour(g1, g2, clf.decision_function(grid).reshape(g1.shape), levels=[0],
                   colors=c)
        ax.plot([], [], c, label=est)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", edgecolor="k", s=30)
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    ax.set_title("Parzen classifier boundaries (8 points per class)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{OUT}/parzen.png", dpi=110)


def smm() -> None:
    """SMM Fig. 1a analogue: SVM on the means vs SMM on the distributions."""
    gen = np.random.default_rng(7)
    means = np.array([[-2, 1.5], [0.5, 2.5], [2.5, 1.0], [-1.0, -2.0], [1.5, -1.5],
                      [-3.0, -0.5], [3.2, -2.8]])
    y = np.array([1, 1, 1, 0, 0, 0, 1])
    covs = []
    for _ in means:
        A = gen.normal(size=(2, 2))
        covs.append(0.25 * A @ A.T + 0.1 * np.eye(2))
    covs[6] = np.array([[2.0, 1.5], [1.5, 2.0]])
    P = [Normal(m, c) for m, c in zip(means, covs)]
    g1, g2 = np.meshgrid(np.linspace(-5, 6, 220), np.linspace(-5, 5, 220))
    grid = np.column_stack([g1.ravel(), g2.ravel()])
    bw = 1.0 / np.sqrt(0.25)  # SMM's gamma = 0.25
    svm = SVC(C=100.0, gamma=0.125).fit(means, y)  # sklearn gamma = 1/(2 bw^2)
    smm = SupportMeasureMachine(C=100.0, bandwidth=bw).fit(P, y)
    pts = [Normal(p, 1e-9) for p in grid]
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    ax.contour(g1, g2, svm.decision_function(grid).reshape(g1.shape), levels=[0],
               colors="C0")
    ax.contour(g1, g2, smm.decision_function(pts).reshape(g1.shape), levels=[0],
               colors="C3")
    ax.plot([], [], "C0", label="SVM on the means")
    ax.plot([], [], "C3", label="SMM on the distributions")
    for m, c, lab in zip(means, covs, y):
        ev, V = np.linalg.eigh(c)
        ang = np.degrees(np.arctan2(V[1, 1], V[0, 1]))
        ax.add_patch(Ellipse(m, 4 * np.sqrt(ev[1]), 4 * np.sqrt(ev[0]), angle=ang,
                             fc="none", ec="C1" if lab else "C4"))
        ax.plot(*m, "o", color="C1" if lab else "C4")
    ax.legend(frameon=False, fontsize=8, loc="lower left")
    ax.set_title("7 Gaussian inputs (2-sd ellipses), RBF gamma = 0.25", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{OUT}/smm.png", dpi=110)


if __name__ == "__main__":
    density()
    kpca()
    parzen()
    smm()
