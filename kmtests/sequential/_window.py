"""The budget of a sequential test: the last `capacity` observations and their Gram blocks.

A betting test's witness at step ``t`` is built from the observations before
``t``. Keeping all of them costs memory and time that grow without bound; the
window keeps the last ``capacity`` observations (a ring buffer, the oldest
evicted first) together with the Gram blocks among them and the sums the
witness needs, each kept up to date in ``O(capacity)`` operations per
observation (plus ``O(capacity d)`` kernel evaluations):

* ``rowsum(a, b)[i] = sum_j K_ab[i, j]`` over the occupied slots ``j`` and
  ``colsum(a, b)[j] = sum_i K_ab[i, j]``; ``total(a, b) = 1'K_ab 1``;
* ``hadamard`` (when asked for): ``sum_ij K_xx[i, j] K_yy[i, j]`` (HSIC).

Memory: ``capacity`` rows of each role's points and one ``capacity x
capacity`` float block per Gram block. The sums are recomputed exactly from the
blocks each time the ring wraps around (every ``capacity`` insertions,
``O(capacity^2)``, i.e. ``O(capacity)`` per observation amortised), so rounding
errors of the running updates cannot accumulate over a long stream.

Before the kernels are known (the bandwidth burn-in) the window holds the
points only; :meth:`Window.set_kernels` computes the blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels import Kernel

__all__ = ["Window"]


class Window:
    """Ring buffer of paired observations (one array per role) with Gram blocks.

    Parameters
    ----------
    capacity : int
        The number of observations kept.
    dims : dict
        Columns of each role's points, e.g. ``{"x": 3, "y": 3}``.
    blocks : list of (str, str)
        The Gram blocks kept, e.g. ``[("x", "x"), ("y", "y"), ("x", "y")]``; the
        block ``(a, b)`` is evaluated with the kernel of role ``a``.
    hadamard : bool
        Also keep ``sum_ij K_xx[i, j] K_yy[i, j]`` (needs both diagonal blocks).
    """

    def __init__(self, capacity: int, dims: dict[str, int], blocks: list[tuple[str, str]],
                 hadamard: bool = False) -> None:
        self.capacity = capacity
        self.points = {r: np.zeros((capacity, d)) for r, d in dims.items()}
        self.mask = np.zeros(capacity)
        self.count = 0
        self.head = 0  # the next slot written (the oldest one when full)
        self.block_names = list(blocks)
        self.hadamard = hadamard
        self.kernels: dict[str, Kernel] | None = None
        self._inv_bw: dict[str, np.ndarray] = {}
        self.K: dict[tuple[str, str], np.ndarray] = {}
        self.rows: dict[tuple[str, str], np.ndarray] = {}
        self.cols: dict[tuple[str, str], np.ndarray] = {}
        self.had = 0.0

    # -- queries -----------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.kernels is not None

    def occupied(self) -> np.ndarray:
        """The occupied slots, oldest first."""
        if self.count < self.capacity:
            return np.arange(self.count)
        return (np.arange(self.capacity) + self.head) % self.capacity

    def data(self, role: str) -> np.ndarray:
        """The kept points of `role`, oldest first (a copy)."""
        return self.points[role][self.occupied()]

    def gram(self, role: str, p: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``k_role(p_i, z_j)`` for the rows of `p` (k, d) and `z` (C, d).

        The kernels are the bounded translation-invariant ones,
        ``k = exp(e(sum_j ((p_j - z_j) / bw_j)^2))`` with the kernel's own
        exponent ``e``; the differences are taken directly (no expansion of
        the square, so no cancellation), in ``O(k C d)``.
        """
        diff = (p[:, None, :] - z[None, :, :]) * self._inv_bw[role]
        d2 = np.einsum("ijk,ijk->ij", diff, diff)
        assert self.kernels is not None
        t = self.kernels[role]._exponent(d2)  # type: ignore[attr-defined]
        return np.exp(t, out=t)

    def k1(self, role: str, u: np.ndarray, v: np.ndarray) -> float:
        """``k_role(u, v)`` for two points (as :meth:`gram`)."""
        diff = (u - v) * self._inv_bw[role]
        assert self.kernels is not None
        t = self.kernels[role]._exponent(np.array([diff @ diff]))  # type: ignore[attr-defined]
        return float(np.exp(t[0]))

    def row(self, role: str, point: np.ndarray, against: str) -> np.ndarray:
        """``k_role(point, z_j)`` for every slot ``j`` of `against` (0 at empty slots)."""
        return self.gram(role, point[None, :], self.points[against])[0] * self.mask

    def total(self, a: str, b: str) -> float:
        return float(self.rows[(a, b)] @ self.mask)

    def trace(self, a: str) -> float:
        """``tr K_aa`` over the kept points (= `count`: the kernels have ``k(z, z) = 1``)."""
        return float(self.count)

    # -- changes -----------------------------------------------------------------
    def set_kernels(self, kernels: dict[str, Kernel]) -> None:
        """Fix the kernels and compute every block from the points kept."""
        self.kernels = dict(kernels)
        self._inv_bw = {r: 1.0 / k.bandwidth_values(self.points[r].shape[1])  # type: ignore
                        for r, k in self.kernels.items()}
        for a, b in self.block_names:
            self.K[(a, b)] = self.gram(a, self.points[a], self.points[b])
        self._resum()

    def _resum(self) -> None:
        m = self.mask
        for (a, b), K in self.K.items():
            Km = K * m[:, None] * m[None, :]
            self.rows[(a, b)] = Km.sum(axis=1)
            self.cols[(a, b)] = self.rows[(a, b)] if a == b else Km.sum(axis=0)
        if self.hadamard:
            Kx, Ky = self.K[("x", "x")], self.K[("y", "y")]
            self.had = float(m @ (Kx * Ky) @ m)

    def push(self, new: dict[str, np.ndarray],
             cache: dict[tuple[str, str], np.ndarray] | None = None) -> None:
        """Append one observation (a point per role), evicting the oldest when full.

        `cache` may hold rows computed before the push, ``cache[(p, b)] =
        k(new_p, z_b)`` for every slot of role ``b`` (the block's kernel); they
        are reused for every slot but the one written.
        """
        h = self.head
        if self.count == self.capacity:
            self._evict(h)
        for r, p in new.items():
            self.points[r][h] = p
        if self.ready:
            self._insert(h, cache or {})
        self.mask[h] = 1.0
        self.count = min(self.count + 1, self.capacity)
        self.head = (h + 1) % self.capacity
        if self.ready and self.head == 0:
            self._resum()

    def _evict(self, h: int) -> None:
        if self.ready:
            m = self.mask
            if self.hadamard:
                kx, ky = self.K[("x", "x")][h], self.K[("y", "y")][h]
                self.had -= 2.0 * float((kx * ky) @ m) - kx[h] * ky[h]
            for (a, b), K in self.K.items():
                self.rows[(a, b)] -= K[:, h] * m
                self.rows[(a, b)][h] = 0.0
                if a != b:  # a diagonal block is symmetric: its column sums are its row sums
                    self.cols[(a, b)] -= K[h, :] * m
                    self.cols[(a, b)][h] = 0.0
        self.mask[h] = 0.0
        self.count -= 1

    def _insert(self, h: int, cache: dict[tuple[str, str], np.ndarray]) -> None:
        assert self.kernels is not None
        m = self.mask  # slot h is still empty here

        own: dict[tuple[str, str], float] = {}

        def rows(p: str, b: str, kernel_role: str) -> np.ndarray:
            """k(new_p, z_b) at every slot; slot h is the new point of b."""
            if (p, b) in cache:
                r = cache[(p, b)] * m
                if p == b:  # k(z, z) = 1 for the bounded kernels (exp(-0) exactly)
                    r[h] = 1.0
                else:
                    if (b, p) not in own:
                        own[(p, b)] = self.k1(kernel_role, self.points[p][h],
                                              self.points[b][h])
                    r[h] = own.get((p, b), own.get((b, p)))
                return r
            r = self.gram(kernel_role, self.points[p][h][None, :], self.points[b])[0]
            k_own = r[h]
            r *= m
            r[h] = k_own
            return r

        for (a, b), K in self.K.items():
            row = rows(a, b, a)  # k(new_a, z_b), 0 at the empty slots, k(new_a, new_b) at h
            k_own = float(row[h])
            K[h, :] = row
            if a == b:
                K[:, h] = row
                self.rows[(a, b)] += row
                self.rows[(a, b)][h] = row.sum()  # the new row's sum (own value included)
                continue
            col = rows(b, a, a)  # k(z_a, new_b)
            K[:, h] = col
            self.rows[(a, b)] += col
            self.cols[(a, b)] += row
            self.rows[(a, b)][h] = row.sum()
            self.cols[(a, b)][h] = col.sum()
            K[h, h] = k_own
        if self.hadamard:  # m[h] = 0 still: the new pair's cross terms, then its own
            kx, ky = self.K[("x", "x")][h], self.K[("y", "y")][h]
            self.had += 2.0 * float((kx * ky) @ m) + kx[h] * ky[h]

    def state(self) -> dict[str, Any]:
        """Sizes for reports: slots, kept observations, bytes held."""
        nbytes = sum(p.nbytes for p in self.points.values()) + sum(
            K.nbytes for K in self.K.values())
        return {"capacity": self.capacity, "kept": self.count, "bytes": nbytes}
