"""The DMOC nonlinear program: decision-variable layout, bounds and the declared sparsity
(Kobilarov, Crane & Desbrun 2009, §6 and Fig. 11, after Junge, Marsden & Ober-Blöbaum 2005;
``docs/equations.md``, "DMOC").

Minimise a cost over the discrete trajectory (poses, velocities, shape variables, the controls of
every step, and the duration when it is free) subject to the integrator's update equations at every
step, boundary conditions and per-step inequalities. A *group* is one kind of per-step function (a
model's update equations, an obstacle clearance, a cost term) evaluated at K instances at once:
instance k reads L local variables ``y[idx[k]]`` and returns m values and, optionally analytically,
their Jacobian (K, m, L). A group's declared sparsity is its (m, L) mask replicated over the
instances — the block-banded pattern (step k touches only steps k − 1, k, k + 1) the solvers receive.
Derivatives a group does not give are central differences over its L local coordinates with all K
instances perturbed at once: the column-group colouring of the banded Jacobian, never a dense
difference. The Lagrangian Hessian is exact where a group gives ``hess`` (the car's update, the
holonomic vehicles' pose and momentum updates, obstacles, waypoints, costs, bounds), otherwise the
same coloured differences of the analytic Jacobians over the columns free in some instance.
A :class:`GroupBatch` (every obstacle's clearance) is asked once per callback; consecutive groups
sharing elementwise functions (``Group.elementwise``) are evaluated in one call. Variables fixed by
the scenario (the start state, a goal pose given exactly, a waypoint heading) are removed from the
decision vector, so the solvers see only free variables.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import VehicleMotionError

GroupFun = Callable[..., np.ndarray]

# Relative step of the coloured central differences (≈ eps^(1/3), optimal for O(δ²) error).
FD_STEP = 6e-6


class Layout:
    """Named blocks of the full variable vector y (before fixed variables are removed)."""

    def __init__(self) -> None:
        self.size = 0
        self.blocks: dict[str, np.ndarray] = {}
        self.columns: dict[str, tuple[str, ...]] = {}
        self.axis_names: dict[str, str] = {}

    def add(self, name: str, shape: int | tuple[int, ...], columns: tuple[str, ...] = (),
            axis: str = "node") -> np.ndarray:
        """A block of variables; ``columns`` names the last axis (for messages), ``axis`` the first."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape)) if shape else 1
        idx = np.arange(self.size, self.size + n).reshape(shape)
        self.size += n
        self.blocks[name] = idx
        self.columns[name] = tuple(columns)
        self.axis_names[name] = axis
        return idx

    def __getitem__(self, name: str) -> np.ndarray:
        return self.blocks[name]

    def name_of(self, i: int) -> str:
        for name, idx in self.blocks.items():
            if idx.ndim == 0:
                if int(idx) == i:
                    return name
                continue
            hit = np.argwhere(idx == i)
            if hit.size:
                pos = [int(v) for v in hit[0]]
                cols = self.columns.get(name)
                if cols and len(pos) == 2:
                    return f"{cols[pos[1]]} at {self.axis_names[name]} {pos[0]}"
                return f"{name}{pos}"
        return f"y[{i}]"


@dataclass
class Group:
    """K instances of an m-valued function of L local variables ``y[idx[k]]``.

    ``fun(X, *params) -> (B, m)`` and ``jac(X, *params) -> (B, m, L)`` take a batch
    X (B, L) and per-instance parameters with the same leading axis B (the solver
    tiles ``params`` when it batches perturbations). ``jac=None`` means coloured
    central differences. ``mask`` (m, L) declares which local variables each row
    depends on. For a constraint, ``lower ≤ value ≤ upper`` (broadcast to (K, m));
    for a cost term, the values are summed. ``linear`` groups have a zero Hessian.
    """

    name: str
    idx: np.ndarray
    fun: GroupFun
    mask: np.ndarray
    jac: GroupFun | None = None
    params: tuple[np.ndarray, ...] = ()
    lower: Any = 0.0
    upper: Any = 0.0
    linear: bool = False
    hess: Callable[..., np.ndarray] | None = None  # hess(X, lam (B, m), *params) -> (B, L, L)
    labels: Sequence[str] | None = None  # per-instance description, for messages
    nonlinear: np.ndarray | None = None  # (L,) local variables with a nonzero Hessian row (default: all)
    hess_mask: np.ndarray | None = None  # (L, L) structural Hessian (default: nonlinear pairs sharing a row)
    hess_colors: np.ndarray | None = None  # (L,) ints: columns of one colour share no Hessian row
    hess_jac: GroupFun | None = None  # Jacobian differenced for the Hessian (default: jac); may omit terms
    complex_step: bool = False  # jac=None and fun is complex-safe: complex-step Jacobian (exact)
    batch: "GroupBatch | None" = None  # evaluates this group together with others (see GroupBatch)
    # fun, jac and hess treat every instance on its own, elementwise (no sums or products over the batch), so
    # an instance's values do not depend on the others: consecutive constraint groups sharing these very
    # functions are evaluated in one call over their instances end to end (the same values, fewer calls)
    elementwise: bool = False

    def __post_init__(self) -> None:
        self.idx = np.asarray(self.idx, dtype=np.int64)
        if self.idx.ndim != 2:
            raise ValueError(f"group {self.name}: idx must be (K, L), got {self.idx.shape}")
        self.mask = np.asarray(self.mask, dtype=bool)
        if self.mask.ndim not in (2, 3) or self.mask.shape[-1] != self.idx.shape[1] or (
                self.mask.ndim == 3 and self.mask.shape[0] != self.idx.shape[0]):
            raise ValueError(f"group {self.name}: mask must be (m, L) or (K, m, L) with L = {self.idx.shape[1]}, "
                             f"got {self.mask.shape}")
        self.params = tuple(np.asarray(p) for p in self.params)
        for p in self.params:
            if p.shape[:1] != (self.K,):
                raise ValueError(f"group {self.name}: params need a leading axis of {self.K}")
        used = np.any(self.mask.reshape(-1, self.L), axis=0)
        if self.linear:
            self.nonlinear = np.zeros(self.L, dtype=bool)
        elif self.nonlinear is None:
            self.nonlinear = used
        else:
            self.nonlinear = np.asarray(self.nonlinear, dtype=bool) & used
        nl = self.nonlinear
        if self.hess_mask is None:
            mk = self.mask.reshape(-1, self.m, self.L).astype(int)
            self.hess_mask = np.any(np.einsum("kij,kil->kjl", mk, mk) > 0, axis=0)
        self.hess_mask = np.asarray(self.hess_mask, dtype=bool) & nl[:, None] & nl[None, :]
        if self.hess_colors is None:
            self.hess_colors = np.arange(self.L)
        self.hess_colors = np.asarray(self.hess_colors)
        self._fd_plan: tuple[Any, ...] | None = None
        # (L,) local columns free in at least one instance (set by the NLP): the coloured differences
        # perturb only these, since Hessian rows and columns of fixed variables are never read
        self.active: np.ndarray = np.ones(self.L, dtype=bool)
        shape = (self.K, self.m)
        self.lower = np.broadcast_to(np.asarray(self.lower, dtype=float), shape).copy()
        self.upper = np.broadcast_to(np.asarray(self.upper, dtype=float), shape).copy()

    @property
    def K(self) -> int:
        return self.idx.shape[0]

    @property
    def L(self) -> int:
        return self.idx.shape[1]

    @property
    def m(self) -> int:
        return self.mask.shape[-2]

    @property
    def instance_mask(self) -> np.ndarray:
        """(K, m, L): the declared structural nonzeros of every instance (a (m, L) mask replicated)."""
        return self.mask if self.mask.ndim == 3 else np.broadcast_to(self.mask, (self.K,) + self.mask.shape)

    def values(self, X: np.ndarray, params: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
        out = self.fun(X, *(self.params if params is None else params))
        return np.asarray(out, dtype=float).reshape(X.shape[0], self.m)

    def jacobian(self, X: np.ndarray, params: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
        """(B, m, L): analytic when given, else coloured central differences."""
        params = self.params if params is None else params
        if self.jac is not None:
            return np.asarray(self.jac(X, *params), dtype=float).reshape(X.shape[0], self.m, self.L)
        if self.complex_step:
            return cs_jacobian(self.fun, X, params, self.L, self.m)
        return fd_jacobian(lambda Xb, *pb: self.values(Xb, pb), X, params, self.L)

    def hessian(self, X: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Σ_i lam_i ∇² value_i per instance, (K, L, L), symmetric; only rows/columns of the
        ``nonlinear`` local variables are nonzero (the others enter affinely with constant
        coefficients, so their second derivatives vanish)."""
        if self.hess is not None:
            H = np.asarray(self.hess(X, lam, *self.params), dtype=float)
            return 0.5 * (H + np.swapaxes(H, 1, 2))
        cols = np.flatnonzero(self.nonlinear & self.active)
        if not len(cols):
            return np.zeros((X.shape[0], self.L, self.L))
        if self._fd_plan is None or not np.array_equal(self._fd_plan[0], cols):
            colors = [cols[self.hess_colors[cols] == c] for c in np.unique(self.hess_colors[cols])]
            hmask = self.hess_mask & self.active[:, None] & self.active[None, :]
            self._fd_plan = (cols, colors, hmask, fd_hessian_plan(colors, hmask))
        _, colors, hmask, plan = self._fd_plan
        jac = self.jacobian
        if self.hess_jac is not None:
            hj = self.hess_jac
            jac = lambda Xb, pb: np.asarray(hj(Xb, *pb), dtype=float).reshape(Xb.shape[0], self.m, self.L)  # noqa: E731
        return fd_hessian_colored(jac, X, self.params, lam, colors, hmask, plan)


class GroupBatch:
    """Several constraint groups over the same instances (one ``idx``) evaluated in one pass.

    ``groups`` lists them in order; when they are consecutive in an NLP's constraints, the NLP asks the
    batch instead of each group (one gather of X, one call per callback; rows, names, labels and
    bounds stay the groups' own). Subclasses give, for X (K, L) at the groups' own params:
    ``values(X)`` (G, K, m) — the groups' values, stacked; ``jacobian(X)`` (G, K, m, L) — their
    Jacobians; ``hessian(X, lam)`` (K, L, L) for lam (G, K, m) — Σ_g Σ_i lam_gi ∇² value_gi, the
    groups' ``hess`` summed per instance (one Hessian per instance, not one per group), not
    necessarily symmetric."""

    groups: list[Group]

    def values(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def jacobian(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hessian(self, X: np.ndarray, lam: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """a and b hold the same values: a cheap test for the last-point caches (a byte comparison of float
    arrays; a −0.0 against 0.0 only costs a recomputation)."""
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype == np.float64:
        return a.tobytes() == b.tobytes()
    return bool(np.array_equal(a, b))


class LastCall:
    """f(X, *params) remembered at the last point: IPOPT asks the values, the Jacobian and the Hessian
    at the same z, and groups that share a sub-computation (the body points of every obstacle's
    clearance) ask it once. A hit needs X equal (values) and the very same params objects (the
    remembered ones are kept alive, so identity cannot be recycled)."""

    def __init__(self, f: Callable[..., Any]):
        self.f = f
        self.X: np.ndarray | None = None
        self.params: tuple[Any, ...] = ()
        self.out: Any = None

    def __call__(self, X: np.ndarray, *params: Any) -> Any:
        last = self.X
        if (last is not None and len(params) == len(self.params)
                and all(a is b for a, b in zip(params, self.params)) and same_values(last, X)):
            return self.out
        self.out = self.f(X, *params)
        self.X, self.params = np.array(X, dtype=float, copy=True), params
        return self.out


def _tile(params: tuple[np.ndarray, ...], reps: int) -> tuple[np.ndarray, ...]:
    return tuple(np.tile(p, (reps,) + (1,) * (p.ndim - 1)) for p in params)


def _steps(X: np.ndarray) -> np.ndarray:
    return FD_STEP * np.maximum(1.0, np.abs(X))


def fd_jacobian(fun: Callable[..., np.ndarray], X: np.ndarray, params: tuple[np.ndarray, ...],
                L: int) -> np.ndarray:
    """Central differences over the L local coordinates, every instance at once (one batched call)."""
    K = X.shape[0]
    d = _steps(X)
    P = np.repeat(X[None], 2 * L, axis=0)  # (2L, K, L)
    j = np.arange(L)
    P[j, :, j] += d.T
    P[L + j, :, j] -= d.T
    F = np.asarray(fun(P.reshape(2 * L * K, L), *_tile(params, 2 * L)), dtype=float).reshape(2 * L, K, -1)
    return np.transpose((F[:L] - F[L:]) / (2 * d.T[:, :, None]), (1, 2, 0))  # (K, m, L)


CS_STEP = 1e-30


def cs_jacobian(fun: Callable[..., np.ndarray], X: np.ndarray, params: tuple[np.ndarray, ...], L: int,
                m: int) -> np.ndarray:
    """Complex-step Jacobian Im f(X + iε e_j)/ε over the L local coordinates, every instance at once
    (one batched call): exact to rounding (no subtractive cancellation), same colouring as
    :func:`fd_jacobian`. ``fun`` must be complex-analytic (no abs, no real-only casts)."""
    K = X.shape[0]
    P = np.repeat(X[None].astype(complex), L, axis=0)  # (L, K, L)
    j = np.arange(L)
    P[j, :, j] += 1j * CS_STEP
    F = np.asarray(fun(P.reshape(L * K, L), *_tile(params, L))).reshape(L, K, m)
    return np.transpose(F.imag / CS_STEP, (1, 2, 0))


def fd_hessian(jac: Callable[..., np.ndarray], X: np.ndarray, params: tuple[np.ndarray, ...],
               lam: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    """Coloured central differences of the Jacobian contracted with lam, perturbing the local
    columns ``cols`` (default all) of every instance at once: rows ``cols`` of ∇²(lamᵀ value), (K, nc, L)."""
    K, L = X.shape
    cols = np.arange(L) if cols is None else np.asarray(cols)
    nc = len(cols)
    d = _steps(X)[:, cols]  # (K, nc)
    P = np.repeat(X[None], 2 * nc, axis=0)
    j = np.arange(nc)
    P[j, :, cols] += d.T
    P[nc + j, :, cols] -= d.T
    J = jac(P.reshape(2 * nc * K, L), _tile(params, 2 * nc)).reshape(2 * nc, K, -1, L)
    G = np.einsum("pkml,km->pkl", J, lam)  # gradients of lamᵀ value at each perturbation
    return np.transpose((G[:nc] - G[nc:]) / (2 * d.T[:, :, None]), (1, 0, 2))


def fd_hessian_plan(colors: Sequence[np.ndarray], hmask: np.ndarray) -> tuple[np.ndarray, ...]:
    """Where :func:`fd_hessian_colored` reads each Hessian entry: (colour, row, column) triples of the
    entries that colour(c)'s difference gives alone, the (L, L) mask of those, and of their transposes."""
    L = hmask.shape[0]
    ci, rr, cc = [], [], []
    for i, cols in enumerate(colors):
        owners = hmask[:, cols]                               # (L rows, |cols|)
        unique_row = owners.sum(axis=1) == 1
        for j, c in enumerate(cols):
            rows = np.flatnonzero(owners[:, j] & unique_row)
            ci.extend([i] * len(rows))
            rr.extend(rows.tolist())
            cc.extend([int(c)] * len(rows))
    ci, rr, cc = (np.asarray(v, dtype=np.int64) for v in (ci, rr, cc))
    filled = np.zeros((L, L), dtype=bool)
    filled[rr, cc] = True
    return ci, rr, cc, filled & filled.T, filled


def fd_hessian_colored(jac: Callable[..., np.ndarray], X: np.ndarray, params: tuple[np.ndarray, ...],
                       lam: np.ndarray, colors: Sequence[np.ndarray], hmask: np.ndarray,
                       plan: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """∇²(lamᵀ value) (K, L, L) by central differences of the Jacobian, one perturbation pair per
    colour: every column of a colour is perturbed at once (Curtis–Powell–Reid within the instance).
    Entry (r, c) is read off colour(c)'s difference when c is the only column of its colour in Hessian
    row r (``hmask``); the others are filled from the transposed entry; both → their mean. ``plan``:
    :func:`fd_hessian_plan` of (colors, hmask), computed once by the caller."""
    K, L = X.shape
    C = len(colors)
    ci, rr, cc, both, filled = fd_hessian_plan(colors, hmask) if plan is None else plan
    d = _steps(X)
    P = np.repeat(X[None], 2 * C, axis=0)
    for i, cols in enumerate(colors):
        P[i][:, cols] += d[:, cols]
        P[C + i][:, cols] -= d[:, cols]
    J = jac(P.reshape(2 * C * K, L), _tile(params, 2 * C)).reshape(2 * C, K, -1, L)
    G = np.einsum("pkml,km->pkl", J, lam)
    D = 0.5 * (G[:C] - G[C:])  # (C, K, L)
    H = np.zeros((K, L, L))
    H[:, rr, cc] = D[ci, :, rr].T / d[:, cc]
    Ht = np.swapaxes(H, 1, 2)
    return np.where(both, 0.5 * (H + Ht), np.where(filled, H, Ht)) * hmask


def _hess_entries(hess_mask: np.ndarray, fp: np.ndarray) -> tuple[np.ndarray, ...]:
    """Pairs of local variables that share a row (``hess_mask`` (L, L)), lower triangle in free columns
    ``fp`` (K, L) (−1 where fixed): flat positions in (K, L, L), their rows, columns, and the flat
    positions of the transposed entries (the symmetric part ½(H + Hᵀ) is formed on the gathered
    entries only, never on the whole (K, L, L) array)."""
    K, L = fp.shape
    a = fp[:, :, None]
    b = fp[:, None, :]
    hk = hess_mask[None] & (a >= 0) & (b >= 0) & (a >= b)
    hflat = np.flatnonzero(hk)
    k2, j2, l2 = np.unravel_index(hflat, (K, L, L))
    hflat_t = (hflat // (L * L)) * (L * L) + (hflat % L) * L + (hflat // L) % L
    return hflat, fp[k2, j2], fp[k2, l2], hflat_t


class _Scatter:
    """Entries of a group's (K, m, L) Jacobian that are structurally nonzero and free."""

    def __init__(self, group: Group, row0: int, freepos: np.ndarray):
        K, m, L = group.K, group.m, group.L
        fp = freepos[group.idx]  # (K, L), −1 where fixed
        self.fp = fp
        group.active = np.any(fp >= 0, axis=0)
        keep = group.instance_mask & (fp[:, None, :] >= 0)  # (K, m, L)
        self.flat = np.flatnonzero(keep)
        kk, ii, jj = np.unravel_index(self.flat, (K, m, L))
        self.rows = row0 + kk * m + ii
        self.cols = fp[kk, jj]
        if group.linear:
            self.hflat = np.zeros(0, dtype=np.int64)
            self.hrows = self.hcols = self.hflat_t = self.hflat
        else:
            self.hflat, self.hrows, self.hcols, self.hflat_t = _hess_entries(group.hess_mask, fp)


class _Block:
    """One step of the NLP's evaluation loops: a single group; the consecutive groups of one
    :class:`GroupBatch` (their rows r0 … r1 contiguous, Jacobian entries in the groups' order, one
    Hessian per instance over the union of their Hessian masks); or consecutive ``elementwise`` groups
    sharing their functions, stacked (``group`` evaluates all their instances, entries in the groups' order)."""

    def __init__(self, groups: list[Group], scatters: list[_Scatter], r0: int, kind: str = "single"):
        g = groups[0]
        self.group = g if kind != "stack" else _stacked(groups)
        self.batch = g.batch if kind == "batch" else None
        self.groups = groups
        self.r0 = r0
        self.r1 = r0 + sum(h.K * h.m for h in groups)
        self.shape = (len(groups), g.K, g.m) if self.batch is not None else ((self.r1 - r0) // g.m, g.m)
        # per stacked group: its multipliers' rows and its Hessian entries within the block's
        self.parts: list[tuple[slice, slice]] = []
        if kind == "single":
            s = scatters[0]
            self.flat, self.hflat, self.hrows, self.hcols, self.hflat_t = s.flat, s.hflat, s.hrows, s.hcols, s.hflat_t
        elif kind == "batch":
            size = g.K * g.m * g.L  # Jacobian entries of one group
            self.flat = np.concatenate([s.flat + i * size for i, s in enumerate(scatters)])
            union = np.logical_or.reduce([h.hess_mask for h in groups])
            self.hflat, self.hrows, self.hcols, self.hflat_t = _hess_entries(union, scatters[0].fp)
        else:
            k0 = np.cumsum([0] + [h.K for h in groups])  # first instance of each group in the stack
            m, L = g.m, g.L
            cat = lambda xs: np.concatenate(xs).astype(np.int64)  # noqa: E731
            self.flat = cat([s.flat + k * m * L for s, k in zip(scatters, k0)])
            self.hflat = cat([s.hflat + k * L * L for s, k in zip(scatters, k0)])
            self.hflat_t = cat([s.hflat_t + k * L * L for s, k in zip(scatters, k0)])
            self.hrows, self.hcols = cat([s.hrows for s in scatters]), cat([s.hcols for s in scatters])
            e0 = np.cumsum([0] + [len(s.hflat) for s in scatters])
            self.parts = [(slice(k0[i] * m, k0[i + 1] * m), slice(e0[i], e0[i + 1])) for i in range(len(groups))]
        self.linear = all(h.linear for h in groups)


def _stacked(groups: list[Group]) -> Group:
    """One group evaluating the instances of stackable ``groups`` (:func:`_stackable`) end to end."""
    g = groups[0]
    params = tuple(np.concatenate(ps) for ps in zip(*(h.params for h in groups)))
    return Group(" + ".join(h.name for h in groups), np.concatenate([h.idx for h in groups]), g.fun,
                 np.concatenate([h.instance_mask for h in groups]), jac=g.jac, params=params, linear=g.linear,
                 hess=g.hess, elementwise=True)


def _stackable(a: Group, b: Group) -> bool:
    """b can follow a in one stacked call: both elementwise, the same functions (analytic Jacobian, and
    analytic Hessian unless linear), the same local layout and parameters' shapes."""
    return (a.elementwise and b.elementwise and a.batch is None and b.batch is None
            and a.fun is b.fun and a.jac is b.jac and a.hess is b.hess and a.jac is not None
            and (a.hess is not None or a.linear) and a.linear == b.linear and a.m == b.m and a.L == b.L
            and len(a.params) == len(b.params) and all(p.shape[1:] == q.shape[1:] for p, q in zip(a.params, b.params)))


def _batch_runs(groups: Sequence[Group]) -> list[tuple[list[Group], str]]:
    """The constraint groups cut into runs: a batch's groups ("batch") when they follow each other in its
    order over the same instances (none linear), consecutive stackable groups ("stack"), else single groups."""
    runs: list[tuple[list[Group], str]] = []
    i = 0
    while i < len(groups):
        b = groups[i].batch
        members = list(getattr(b, "groups", ()) or ())
        n = len(members)
        if (b is not None and n and all(x is y for x, y in zip(groups[i:i + n], members))
                and len(groups[i:i + n]) == n and not any(h.linear for h in members)
                and all(h.batch is b and h.m == members[0].m and np.array_equal(h.idx, members[0].idx)
                        for h in members)):
            runs.append((members, "batch"))
            i += n
            continue
        j = i + 1
        while j < len(groups) and _stackable(groups[i], groups[j]):
            j += 1
        runs.append((list(groups[i:j]), "stack" if j > i + 1 else "single"))
        i = j
    return runs


class _Pattern:
    """A COO pattern with duplicates summed through a fixed map."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]):
        self.shape = shape
        key = rows.astype(np.int64) * shape[1] + cols
        uniq, self.map = np.unique(key, return_inverse=True)
        self.rows = (uniq // shape[1]).astype(np.int64)
        self.cols = (uniq % shape[1]).astype(np.int64)
        self.identity = len(uniq) == len(key) and np.array_equal(self.map, np.arange(len(key)))
        self.nnz = len(uniq)
        # no duplicates: the reduction is a permutation, done as a gather (+ 0.0 as bincount's 0 + v)
        self._inverse = np.argsort(self.map) if len(uniq) == len(key) and not self.identity else None

    def reduce(self, data: np.ndarray) -> np.ndarray:
        if self.identity:
            return data
        if self._inverse is not None:
            out = data[self._inverse]
            out += 0.0
            return out
        return np.bincount(self.map, weights=data, minlength=self.nnz)

    def matrix(self, values: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((values, (self.rows, self.cols)), shape=self.shape)


class _Into:
    """Where one block's Jacobian entries land in the values on a pattern: the range [lo, hi) of the
    pattern's (row-sorted) entries, which the block owns when it owns its rows. Distinct entries (the
    usual case) are one gather from the block's Jacobian in the pattern's order (``src``); repeated ones
    are summed by ``np.bincount`` over the range, in the order the pattern's own reduction adds them."""

    def __init__(self, flat: np.ndarray, seg: np.ndarray, lo: int):
        """``flat``: the block's entries in its raveled Jacobian; ``seg``: their unique-entry indices."""
        self.lo = lo
        self.hi = int(seg.max()) + 1 if len(seg) else lo
        local = seg - lo
        self.src: np.ndarray | None = None
        if len(seg) == self.hi - lo and (len(seg) == 0 or np.unique(local).size == len(seg)):
            self.src = np.empty(len(seg), dtype=np.int64)
            self.src[local] = flat
        self.flat, self.map = flat, local

    def fill(self, raw: np.ndarray, values: np.ndarray) -> None:
        """values[lo:hi] from the block's raveled Jacobian ``raw``."""
        if self.src is not None:
            raw.take(self.src, out=values[self.lo:self.hi], mode="clip")  # (clip: no buffered out; src is valid)
        else:
            values[self.lo:self.hi] = np.bincount(self.map, weights=raw[self.flat], minlength=self.hi - self.lo)


def _jacobian_plan(pattern: "_Pattern", flats: Sequence[np.ndarray]) -> list[_Into] | None:
    """One :class:`_Into` per block when the blocks' ranges tile the pattern's entries in order (each
    entry written by exactly one block), else None (the entries then go through ``pattern.reduce``)."""
    plan, at, lo = [], 0, 0
    for flat in flats:
        seg = pattern.map[at:at + len(flat)]
        at += len(flat)
        if len(seg) and int(seg.min()) != lo:
            return None
        plan.append(_Into(flat, seg, lo))
        lo = plan[-1].hi
    return plan if lo == pattern.nnz else None


@dataclass
class Evaluation:
    """Values at z (always) and first derivatives (filled on first request)."""

    z: np.ndarray
    y: np.ndarray
    cost: float
    cons: np.ndarray
    grad: np.ndarray | None = None
    jac: np.ndarray | None = None  # values on NLP.jac_pattern
    xc: list[np.ndarray] | None = None  # y[idx] of every constraint block (reused by the derivatives)
    xo: list[np.ndarray] | None = None  # and of every cost group
    key: bytes = b""  # z's bytes: the cache test compares them with the asked point's


class _Lower:
    """The Hessian's entries on hess_pattern before its reduction, filled block by block: an analytic
    Hessian's lower entries go to ``low`` and their transposed entries to ``up``, so that the symmetric
    part ½(H + Hᵀ) (the same sums as Group.hessian) is one add and one multiply over all blocks at once;
    entries given as they are (difference Hessians, symmetric already) are written after that."""

    def __init__(self, size: int):
        self.low, self.up = np.empty(size), np.empty(size)
        self.at = 0
        self.last = slice(0, 0)  # the entries of the block filled last
        self.given: list[tuple[slice, np.ndarray]] = []

    def _next(self, s: _Scatter | _Block) -> slice:
        self.last = slice(self.at, self.at + len(s.hflat))
        self.at = self.last.stop
        return self.last

    def _zeros(self, sl: slice) -> None:
        self.low[sl] = 0.0
        self.up[sl] = 0.0

    def clear(self, part: slice) -> None:
        """Zeros for the entries ``part`` (offsets within it) of the block just filled."""
        self._zeros(slice(self.last.start + part.start, self.last.start + part.stop))

    def zero(self, s: _Scatter | _Block) -> None:
        self._zeros(self._next(s))

    def analytic(self, H: np.ndarray, s: _Scatter | _Block) -> None:
        """H (…, L, L) of an analytic ``hess`` (or a batch's Hessian), not necessarily symmetric."""
        sl = self._next(s)
        H = np.asarray(H, dtype=float).reshape(-1)
        H.take(s.hflat, out=self.low[sl], mode="clip")  # (clip: take writes straight into out; indices valid)
        H.take(s.hflat_t, out=self.up[sl], mode="clip")

    def group(self, g: Group, X: np.ndarray, lam: np.ndarray, s: _Scatter | _Block) -> None:
        if g.hess is not None:
            self.analytic(g.hess(X, lam, *g.params), s)
            return
        self.zero(s)
        self.given.append((self.last, g.hessian(X, lam).reshape(-1)[s.hflat]))

    def values(self) -> np.ndarray:
        """½(low + up), the given entries over it (before the pattern's reduction)."""
        out = np.add(self.low, self.up, out=self.low)
        out *= 0.5
        for sl, v in self.given:
            out[sl] = v
        return out


class NLP:
    """min Σ costs(y) s.t. cl ≤ c(y) ≤ cu, lb ≤ z ≤ ub, with y = base except y[free] = z."""

    def __init__(self, layout: Layout, base: np.ndarray, fixed: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, constraints: Sequence[Group], costs: Sequence[Group],
                 meta: dict[str, Any] | None = None):
        self.layout = layout
        self.base = np.asarray(base, dtype=float).copy()
        self.fixed = np.asarray(fixed, dtype=bool)
        self.free = np.flatnonzero(~self.fixed)
        self.freepos = np.full(layout.size, -1, dtype=np.int64)
        self.freepos[self.free] = np.arange(len(self.free))
        self.lb = np.asarray(lower, dtype=float)[self.free]
        self.ub = np.asarray(upper, dtype=float)[self.free]
        self.constraints = [g for g in constraints if g.K > 0]
        self.costs = [g for g in costs if g.K > 0]
        self.meta = dict(meta or {})
        self.n = len(self.free)
        # rows
        self.row0: list[int] = []
        r = 0
        for g in self.constraints:
            self.row0.append(r)
            r += g.K * g.m
        self.m = r
        self.cl = np.concatenate([g.lower.ravel() for g in self.constraints]) if self.constraints else np.zeros(0)
        self.cu = np.concatenate([g.upper.ravel() for g in self.constraints]) if self.constraints else np.zeros(0)
        # Jacobian and Hessian patterns
        self._cscat = [_Scatter(g, r0, self.freepos) for g, r0 in zip(self.constraints, self.row0)]
        self._oscat = [_Scatter(g, 0, self.freepos) for g in self.costs]
        # the evaluation loops run over blocks: single groups, a batch's groups fused, or groups stacked
        self._blocks: list[_Block] = []
        i = 0
        for groups, kind in _batch_runs(self.constraints):
            self._blocks.append(_Block(groups, self._cscat[i:i + len(groups)], self.row0[i], kind))
            i += len(groups)
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)  # noqa: E731
        self.jac_pattern = _Pattern(cat([s.rows for s in self._cscat]), cat([s.cols for s in self._cscat]),
                                    (self.m, self.n))
        allh = self._blocks + self._oscat
        self.hess_pattern = _Pattern(cat([s.hrows for s in allh]), cat([s.hcols for s in allh]), (self.n, self.n))
        # each block's Jacobian entries gathered straight into their place (no reduction pass)
        self._jac_plan = _jacobian_plan(self.jac_pattern, [b.flat for b in self._blocks])
        self._cache: Evaluation | None = None
        # the evaluation before the last one: IPOPT goes back to its iterate after a rejected trial point
        self._previous: Evaluation | None = None
        self.evaluations = 0

    def structure_key(self) -> str:
        """A digest of what a warm start's multipliers are tied to: the layout, which variables are free,
        the constraint groups and their rows, which bounds are finite and which rows are equalities, and
        the Jacobian and Hessian patterns. Two problems with the same key differ only in values (a moved
        key or obstacle), so a solution's multipliers of one are a warm start for the other."""
        import hashlib
        h = hashlib.blake2b(digest_size=16)
        h.update(repr((self.layout.size, self.n, self.m, [(g.name, g.K) for g in self.constraints],
                       [(g.name, g.K) for g in self.costs])).encode())
        for a in (self.free, np.isfinite(self.lb), np.isfinite(self.ub), np.isfinite(self.cl),
                  np.isfinite(self.cu), self.cl == self.cu, self.jac_pattern.rows, self.jac_pattern.cols,
                  self.hess_pattern.rows, self.hess_pattern.cols):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    # -- vectors -----------------------------------------------------------------------------
    def full(self, z: np.ndarray) -> np.ndarray:
        y = self.base.copy()
        y[self.free] = z
        return y

    def reduce(self, y: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=float)[self.free]

    # -- evaluation (cached at the last point: solvers ask for f, g, c, J at the same z) -------
    def _remembered(self, z: np.ndarray) -> Evaluation | None:
        """The evaluation at z if it is the last one or the one before (then made the last one again)."""
        key = z.tobytes()  # (one byte string for both tests; the remembered ones keep theirs)
        c = self._cache
        if c is not None and c.key == key and c.z.shape == z.shape:
            return c
        p = self._previous
        if p is not None and p.key == key and p.z.shape == z.shape:
            self._cache, self._previous = p, c
            return p
        return None

    def evaluate(self, z: np.ndarray) -> Evaluation:
        """Cost and constraint values at z (derivatives are computed on request, see ``derivatives``)."""
        z = np.asarray(z, dtype=float)
        c = self._remembered(z)
        if c is not None:
            return c
        self.evaluations += 1
        y = self.full(z)
        xo = [y[g.idx] for g in self.costs]
        xc = [y[b.group.idx] for b in self._blocks]
        cost = 0.0
        for g, X in zip(self.costs, xo):
            cost += float(g.values(X).sum())
        cons_v = np.empty(self.m)
        for b, X in zip(self._blocks, xc):
            cons_v[b.r0:b.r1] = (b.group.values(X) if b.batch is None else b.batch.values(X)).reshape(-1)
        ev = Evaluation(z.copy(), y, cost, cons_v, xc=xc, xo=xo, key=z.tobytes())
        self._previous, self._cache = self._cache, ev
        return ev

    def derivatives(self, z: np.ndarray) -> Evaluation:
        ev = self.evaluate(z)
        if ev.grad is None:
            grad = np.zeros(self.n)
            for g, s, X in zip(self.costs, self._oscat, ev.xo):
                J = g.jacobian(X)
                grad += np.bincount(s.cols, weights=J.reshape(-1)[s.flat], minlength=self.n)
            ev.jac = self._jacobian_values(ev.xc)
            ev.grad = grad
        return ev

    def _jacobian_values(self, xc: list[np.ndarray]) -> np.ndarray:
        """The constraint Jacobian's values on jac_pattern from the blocks' inputs."""
        raws = [(b.group.jacobian(X) if b.batch is None else b.batch.jacobian(X)).reshape(-1)
                for b, X in zip(self._blocks, xc)]
        pattern = self.jac_pattern
        if self._jac_plan is None:
            return pattern.reduce(np.concatenate([raw[b.flat] for b, raw in zip(self._blocks, raws)]))
        values = np.empty(pattern.nnz)
        for into, raw in zip(self._jac_plan, raws):
            into.fill(raw, values)
        if not pattern.identity:
            values += 0.0  # as pattern.reduce: its sums start from 0.0 (a −0.0 entry comes out as +0.0)
        return values

    def objective(self, z: np.ndarray) -> float:
        return self.evaluate(z).cost

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self.derivatives(z).grad

    def constraint_values(self, z: np.ndarray) -> np.ndarray:
        return self.evaluate(z).cons

    def jacobian_values(self, z: np.ndarray) -> np.ndarray:
        return self.derivatives(z).jac

    def jacobian(self, z: np.ndarray) -> sp.csr_matrix:
        return self.jac_pattern.matrix(self.jacobian_values(z))

    def hessian_values(self, z: np.ndarray, lam: np.ndarray, obj_factor: float = 1.0) -> np.ndarray:
        """Lower triangle of ∇²(obj_factor·cost + lamᵀ c) on hess_pattern."""
        z = np.asarray(z, dtype=float)
        c = self._remembered(z)
        if c is not None and c.xc is not None:
            xc, xo = c.xc, c.xo  # the solvers ask the Hessian at the point just evaluated
        else:
            y = self.full(z)
            xc = [y[b.group.idx] for b in self._blocks]
            xo = [y[g.idx] for g in self.costs]
        lam = np.asarray(lam, dtype=float)
        lower = _Lower(len(self.hess_pattern.map))
        for b, X in zip(self._blocks, xc):
            if b.linear or not len(b.hflat):
                continue
            lg = lam[b.r0:b.r1].reshape(b.shape)
            if not np.count_nonzero(lg):  # (count_nonzero: a C call, cheaper than ndarray.any)
                lower.zero(b)
            elif b.batch is None:
                lower.group(b.group, X, lg, b)
                for rows, entries in b.parts:  # a stacked group without multipliers: zeros, as alone
                    if not np.count_nonzero(lg.reshape(-1)[rows]):
                        lower.clear(entries)
            else:  # one Hessian per instance for all the batch's groups
                lower.analytic(b.batch.hessian(X, lg), b)
        for g, s, X in zip(self.costs, self._oscat, xo):
            if not g.linear and len(s.hflat):
                lower.group(g, X, np.full((g.K, 1), float(obj_factor)), s)
        return self.hess_pattern.reduce(lower.values()) if lower.at else np.zeros(self.hess_pattern.nnz)

    def hessian(self, z: np.ndarray, lam: np.ndarray, obj_factor: float = 1.0) -> sp.csr_matrix:
        """Full symmetric sparse Hessian of the Lagrangian."""
        low = self.hess_pattern.matrix(self.hessian_values(z, lam, obj_factor))
        return (low + low.T - sp.diags(low.diagonal())).tocsr()

    # -- diagnostics -----------------------------------------------------------------------------
    def violations(self, z: np.ndarray) -> np.ndarray:
        """Per-row violation of cl ≤ c ≤ cu (≥ 0)."""
        c = self.constraint_values(z)
        return np.maximum(np.maximum(self.cl - c, c - self.cu), 0.0)

    def bound_violation(self, z: np.ndarray) -> float:
        z = np.asarray(z, dtype=float)
        if not len(z):
            return 0.0
        return float(np.max(np.maximum(np.maximum(self.lb - z, z - self.ub), 0.0), initial=0.0))

    def max_violation(self, z: np.ndarray) -> float:
        v = self.violations(z)
        return max(float(np.max(v, initial=0.0)), self.bound_violation(z))

    def worst(self, z: np.ndarray) -> tuple[str, float]:
        """The constraint group (and instance) with the largest violation, for messages."""
        v = self.violations(z)
        if not len(v) or float(np.max(v)) == 0.0:
            return "", 0.0
        i = int(np.argmax(v))
        for g, r0 in zip(self.constraints, self.row0):
            if r0 <= i < r0 + g.K * g.m:
                k = (i - r0) // g.m
                label = g.labels[k] if g.labels is not None else f"instance {k}"
                return f"{g.name} ({label})", float(v[i])
        return "", float(v[i])

    def worst_detail(self, z: np.ndarray) -> dict[str, Any] | None:
        """Where the largest constraint violation is, as data for the caller to name in its own terms:
        ``group`` (name), ``instance`` (index within the group), ``label``, ``node`` (the node, or the
        first node of the step, the label names; None if it names none) and ``value``. None when no
        constraint is violated."""
        v = self.violations(z)
        if not len(v) or float(np.max(v)) == 0.0:
            return None
        i = int(np.argmax(v))
        for g, r0 in zip(self.constraints, self.row0):
            if r0 <= i < r0 + g.K * g.m:
                k = (i - r0) // g.m
                label = g.labels[k] if g.labels is not None else f"instance {k}"
                m = _NODE_LABEL.search(label)
                return {"group": g.name, "instance": int(k), "label": label,
                        "node": None if m is None else int(float(m.group(1))), "value": float(v[i])}
        return None

    def group_violations(self, z: np.ndarray) -> dict[str, float]:
        v = self.violations(z)
        out: dict[str, float] = {}
        for g, r0 in zip(self.constraints, self.row0):
            seg = v[r0:r0 + g.K * g.m]
            out[g.name] = max(out.get(g.name, 0.0), float(np.max(seg, initial=0.0)))
        return out


_NODE_LABEL = re.compile(r"\b(?:node|step) (\d+(?:\.\d+)?)")


def check_finite(name: str, a: np.ndarray) -> None:
    if not np.all(np.isfinite(a)):
        raise VehicleMotionError(f"{name}: non-finite values")


__all__ = ["Layout", "Group", "GroupBatch", "NLP", "Evaluation", "LastCall", "same_values", "fd_jacobian", "cs_jacobian", "fd_hessian",
           "fd_hessian_colored", "fd_hessian_plan", "FD_STEP", "CS_STEP"]
