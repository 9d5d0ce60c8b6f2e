"""Holonomic variational integrator on SE(3): Kobilarov, Crane & Desbrun 2009, "Lie group
integrators for animation and control of vehicles", eqs. (9)–(10) with α = 1, in momentum form,
and ``vi-cay4``, its fourth-order triple jump (Yoshida 1990).

Conventions of docs/equations.md (section "Holonomic variational integrator"): body velocity
ξ = (ω, v), 𝕀 = diag(J₁, J₂, J₃, m, m, m), body wrench f = (τ, F), pose g = (R, x),
g_{k+1} = g_k τ(h ξ_k) (eq. 9). The discrete Euler–Poincaré equation (10),

    C_τ(h ξ_k)ᵀ 𝕀 ξ_k − C_τ(−h ξ_{k−1})ᵀ 𝕀 ξ_{k−1} = h f_k,

is run as a map on (g_k, m_k), m_k the momentum at node k (discrete Legendre transform):

    solve  C_τ(h ξ)ᵀ 𝕀 ξ = m_k + (h/2) f_k        for ξ = ξ_k   (Newton, analytic Jacobian)
    g_{k+1} = g_k τ(h ξ_k)                                       (eq. 9)
    μ_{k+1} = C_τ(−h ξ_k)ᵀ 𝕀 ξ_k                                 (the momentum arriving at k+1)
    m_{k+1} = μ_{k+1} + (h/2) f_{k+1}

with m_0 = 𝕀 ξ(0) (the start-up rule of equations.md). Between two steps the two half
kicks add up to h f_k, so for k ≥ 1 this is eq. (10) exactly; splitting the kick keeps the
scheme second order with forces too (kick–drift–kick). Without the split, m_0 = 𝕀 ξ(0)
followed by a full kick h f_0 shifts a constant force by half a step and leaves an O(h)
error (a dropped body would miss x₀ − ½ g t² by ½ g h t); here a dropped body follows
x₀ + v₀ t − ½ g t² exactly. Both half kicks of step k use f(k, ·), so a wrench given per
step (an array (steps, ..., 6): piecewise constant controls) acts like the zero-order hold of
the baselines and of the DOP853 reference, to second order. The wrench is evaluated as
f(k, R, x, ξ_prev) with ξ_prev the last solved step velocity (ξ(0) at node 0), as in eq. (10)
(f_ext(g_k, ξ_{k−1})).

Modules:
  :mod:`.pairings`      the five pairings (τ, C_τ) as generic 6×6 maps, and what they conserve
  :mod:`.coefficients`  series and closed forms of the exp pairing's coefficient functions
  :mod:`.kernels`       reduced kernels for M = m I₃ (unknown ω alone), hand-unrolled
  :mod:`.newton`        Newton's start, its a-priori error bound, and the solvers on floats
  :mod:`.reduced`       drivers of the reduced kernels: one body on floats, a batch on arrays
  :mod:`.generic`       the generic driver: any pairing, any diagonal 𝕀
  :mod:`.triple_jump`   vi-cay4's composition and the guesses of its sub-steps
  :mod:`.cay4_floats`, :mod:`.cay4_arrays`, :mod:`.cay4_matrices`   vi-cay4's fused drivers
  :mod:`.runs`, :mod:`.outputs`   what every driver shares while it runs and after
  :mod:`.api`           :func:`integrate` and :func:`integrate_cay4`
"""
from __future__ import annotations

from .api import integrate, integrate_cay4
from .cay4_arrays import JOINT_MAX_BATCH
from .coefficients import COEFFICIENT_NAMES, exp_coefficients_array, exp_coefficients_scalar
from .kernels import Kernel
from .newton import FAST_TOL, NEWTON_MAX_ITER, NEWTON_TOL, newton_bound
from .pairings import (PAIRINGS, VI_METHODS, Pairing, momentum_map, momentum_map_jacobian, reduced_finish,
                       reduced_residual)
from .runs import XI_LIMIT, StepRows
from .triple_jump import GAMMA1, GAMMA2, KERNEL, TRIPLE_JUMP

__all__ = ["integrate", "integrate_cay4", "PAIRINGS", "VI_METHODS", "Pairing",
           "Kernel", "momentum_map", "momentum_map_jacobian", "reduced_residual", "reduced_finish",
           "exp_coefficients_scalar", "exp_coefficients_array", "COEFFICIENT_NAMES", "newton_bound",
           "NEWTON_TOL", "NEWTON_MAX_ITER", "FAST_TOL", "XI_LIMIT", "StepRows", "GAMMA1", "GAMMA2",
           "TRIPLE_JUMP", "KERNEL", "JOINT_MAX_BATCH"]
