"""Literal, loop-based reference implementations used by the tests.

Deliberately written from the textbook formulas with scalar kernels and
explicit loops — no shared code with kmtests' vectorised engines.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def k_gauss(bw):
    return lambda a, b: math.exp(-float(np.sum((a - b) ** 2)) / (2 * bw * bw))


def k_linear(a, b):
    return float(np.dot(a, b))


def k_distance(a, b):
    return 0.5 * (np.linalg.norm(a) + np.linalg.norm(b) - np.linalg.norm(a - b))


def mmd2_u(x, y, k):
    m, n = len(x), len(y)
    sxx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    syy = sum(k(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    sxy = sum(k(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    return sxx + syy - 2 * sxy


def mmd2_b(x, y, k):
    m, n = len(x), len(y)
    sxx = sum(k(x[i], x[j]) for i in range(m) for j in range(m)) / m**2
    syy = sum(k(y[i], y[j]) for i in range(n) for j in range(n)) / n**2
    sxy = sum(k(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    return sxx + syy - 2 * sxy


def hsic_b(x, y, kx, ky):
    """MKME eq. (32): (1/n^2) sum K_ij L_ij - (2/n^3) sum K_ij L_ip + (1/n^4) sum K sum L."""
    n = len(x)
    K = [[kx(x[i], x[j]) for j in range(n)] for i in range(n)]
    L = [[ky(y[i], y[j]) for j in range(n)] for i in range(n)]
    t1 = sum(K[i][j] * L[i][j] for i in range(n) for j in range(n)) / n**2
    t2 = sum(K[i][j] * L[i][p] for i in range(n) for j in range(n) for p in range(n)) / n**3
    t3 = (sum(map(sum, K)) * sum(map(sum, L))) / n**4
    return t1 - 2 * t2 + t3


def hsic_u(x, y, kx, ky):
    """U-statistic over distinct index tuples: E k_ij l_ij + E k_ij l_qr - 2 E k_ij l_iq."""
    n = len(x)
    K = [[kx(x[i], x[j]) for j in range(n)] for i in range(n)]
    L = [[ky(y[i], y[j]) for j in range(n)] for i in range(n)]
    a = [K[i][j] * L[i][j] for i, j in itertools.permutations(range(n), 2)]
    b = [K[i][j] * L[q][r] for i, j, q, r in itertools.permutations(range(n), 4)]
    c = [K[i][j] * L[i][q] for i, j, q in itertools.permutations(range(n), 3)]
    return np.mean(a) + np.mean(b) - 2 * np.mean(c)


def median_bw(z):
    d = [float(np.sum((z[i] - z[j]) ** 2)) for i in range(len(z)) for j in range(i + 1, len(z))]
    return math.sqrt(float(np.median(d)))


def weighted_mmd(K, ix, iy, bx, by, unbiased):
    """MMD^2 of weighted embeddings by explicit sums over the pooled Gram matrix K.

    V-form: sum_ij bx_i bx_j K + sum by by K - 2 sum bx by K. U-form: the
    within-sample sums over i != j only, each times n/(n-1).
    """
    m, n = len(ix), len(iy)
    wxx = sum(bx[a] * bx[b] * K[ix[a], ix[b]] for a in range(m) for b in range(m)
              if not unbiased or a != b)
    wyy = sum(by[a] * by[b] * K[iy[a], iy[b]] for a in range(n) for b in range(n)
              if not unbiased or a != b)
    wxy = sum(bx[a] * by[b] * K[ix[a], iy[b]] for a in range(m) for b in range(n))
    if unbiased:
        wxx *= m / (m - 1)
        wyy *= n / (n - 1)
    return wxx + wyy - 2 * wxy


def weighted_hsic(Kc, Lc, beta, unbiased):
    """beta'(Kc o Lc)beta, or its U-form, by explicit sums (Kc, Lc centred Grams).

    U-form: n/(n-3) (sum_{i != j} b_i b_j G_ij - 2/(n-2) sum_i b_i^2 G_ii)
            + (sum b)^2 tr(Kc) tr(Lc) / (n (n-1)(n-2)(n-3)).
    """
    n = len(beta)
    G = [[Kc[i][j] * Lc[i][j] for j in range(n)] for i in range(n)]
    v = sum(beta[i] * beta[j] * G[i][j] for i in range(n) for j in range(n))
    if not unbiased:
        return v
    off = sum(beta[i] * beta[j] * G[i][j] for i in range(n) for j in range(n) if i != j)
    diag = sum(beta[i] ** 2 * G[i][i] for i in range(n))
    trk = sum(Kc[i][i] for i in range(n))
    trl = sum(Lc[i][i] for i in range(n))
    return (n / (n - 3) * (off - 2 / (n - 2) * diag)
            + sum(beta) ** 2 * trk * trl / (n * (n - 1) * (n - 2) * (n - 3)))
