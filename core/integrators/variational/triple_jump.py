"""``vi-cay4``: the triple jump of the vi-cay-ln step, and the guesses its Newton solves start from.

Kernel. The composed map is the paper's own Appendix A pairing (``vi-cay-ln`` of :mod:`.pairings`;
Kobilarov, Crane & Desbrun 2009, "Lie group integrators for animation and control of vehicles"):
τ = se3.cay_paper (rotation cay(hω), translation 2/(4 + θ²)(2I + ĥω) h v, paper eq. 13) with
C(η) = se3.dexp_inv_linear(η) = I − ½ ad_η. Its momentum-form step Φ_h : (g_k, m_k) ↦ (g_{k+1}, m_{k+1}) (eqs. 9–10,
docs/equations.md "Holonomic variational integrator") is

    (I + û) J ω = b^ω,   (I + û) p = b^v,   u = (h/2) ω,   b = m_k + (h/2) f_k      (eq. 10)
    g_{k+1} = g_k τ(hξ),   μ⁺ = C(−hξ)ᵀ𝕀ξ = ((I − û) J ω, (I − û) p) = 2 (Jω, p) − b
    m_{k+1} = μ⁺ + (h/2) f_{k+1}

(the last form of μ⁺ because (I + û)(Jω, p) = b). The map is symmetric, Φ_h⁻¹ = Φ_{−h}:
cay_paper(−η) = cay_paper(η)⁻¹ (tests/core/integrators/test_holonomic.py checks it) and C(−η) is
C(η) with the sign of the ad term flipped, so solving the step backwards from (g_{k+1},
m_{k+1}) with −h gives back (g_k, m_k); the half kicks keep the forced step symmetric for a
wrench that depends on the pose only. It satisfies the discrete Noether identity
C(−ξ)ᵀ = Ad_{τ(ξ)}ᵀ C(ξ)ᵀ, so the spatial momentum of a free body is conserved exactly, and
with M = m I₃ the node kinetic energy too. The symmetric triple jump (Yoshida 1990, "Construction
of higher order symplectic integrators"; Hairer, Lubich & Wanner, *Geometric Numerical
Integration*, §II.4)

    Ψ_h = Φ_{γ₁h} ∘ Φ_{γ₂h} ∘ Φ_{γ₁h},   γ₁ = 1/(2 − 2^{1/3}),   γ₂ = 1 − 2γ₁ (< 0)

is of order 4 and keeps what every sub-step conserves. γ₂ ≈ −1.70: the middle sub-step goes
backwards by 1.7 h. Why I − ½ ad and not the vi-cay kernel with its exact dcay⁻¹: the rotation equation
(I + û) J ω = b^ω does not see the linear momentum, so there is no spin–translation coupling
error growing with |v|² (see :mod:`.pairings`), the step is about a third cheaper, and on the
Fig. 4 benchmark the composed error is 2–3× smaller at equal steps.

Initial guesses. Each sub-step's ω is extrapolated from the same sub-step of the five previous
steps (degree 4, error h⁵ω⁽⁵⁾), and the extrapolation error the other sub-steps have just made
is added: sub-step j is centred at t_k + c_j h (c = 0.676, 0.5, 0.324), the error is nearly one
smooth function of that time, and its linear extrapolation from the errors already known
(E1, E3 of step k − 1, E1 of step k) removes another factor 10–100 (measured on the Fig. 4
bodies; exact for ω a polynomial of degree 6 in t). A solve that fails from the guess restarts
from J⁻¹b^ω, then follows the solution from h = 0 by continuation in h (large |hω|, where
Newton from J⁻¹b^ω can cycle; :mod:`.newton`); only then is it a blow-up.
"""
from __future__ import annotations

import numpy as np

GAMMA1 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
GAMMA2 = 1.0 - 2.0 * GAMMA1
TRIPLE_JUMP: tuple[float, float, float] = (GAMMA1, GAMMA2, GAMMA1)
KERNEL = "vi-cay-ln"          # the composed pairing (PAIRINGS)

# Sub-step j covers [t_k + c_j h − |γ_j| h/2, t_k + c_j h + |γ_j| h/2] (c = 0.676, 0.5, 0.324);
# its extrapolation error E_j(k) ≈ F(t_k + c_j h) for one smooth F. E1 of this step and of the
# previous one and E3 of the previous one are known when a sub-step starts: linear in time,
#   E1(k) ≈ E1(k−1) + K0 (E1(k−1) − E3(k−1)),   E_j(k) ≈ E1(k) + KJ[j] (E1(k) − E1(k−1)).
CENTRES = (0.5 * GAMMA1, GAMMA1 + 0.5 * GAMMA2, 1.0 - 0.5 * GAMMA1)
K0 = 1.0 / (CENTRES[0] - CENTRES[2])
KJ = (0.0, CENTRES[1] - CENTRES[0], CENTRES[2] - CENTRES[0])

# Extrapolation weights, oldest value first, for 1…5 stored values (degree 0…4).
EXTRAP = {1: (1.0,), 2: (-1.0, 2.0), 3: (1.0, -3.0, 3.0), 4: (-1.0, 4.0, -6.0, 4.0),
          5: (1.0, -5.0, 10.0, -10.0, 5.0)}
QUARTIC = (5.0, -10.0, 10.0, -5.0, 1.0)      # ω(k) ≈ Σ_i a_i ω(k − i), i = 1…5
LAGS = 7                                     # ring buffer: ω_j(k), …, ω_j(k − 6)


def predictor_weights(joint: bool = False) -> np.ndarray:
    """W (7, 3, 3·7): the guesses of the three sub-steps of step k (k ≥ 6) as one linear
    combination of the ring buffer H[(k − lag) % 7, sub] — the quartic extrapolation plus the
    error correction of K0/KJ written out in terms of the stored ω. ``joint``: all three
    guesses before any sub-step of step k is solved (the corrections of sub-steps 2 and 3 then
    extrapolate E1, E3 of step k − 1 to t_k + c_j h, like sub-step 1's)."""
    W = np.zeros((LAGS, 3, LAGS, 3))

    def add(kmod, j, lag, sub, c):
        W[kmod, j, (kmod - lag) % LAGS, sub] += c

    for kmod in range(LAGS):
        for j in range(3):
            for i, a in enumerate(QUARTIC, 1):                   # P_j(k)
                add(kmod, j, i, j, a)

        def error(j, lag, sub, c):       # c · E_sub(k − lag) = c (ω_sub(k−lag) − P_sub(k−lag))
            add(kmod, j, lag, sub, c)
            for i, a in enumerate(QUARTIC, 1):
                add(kmod, j, lag + i, sub, -c * a)

        for j in range(3) if joint else (0,):
            f = (CENTRES[j] - CENTRES[0] + 1.0) / (CENTRES[0] - CENTRES[2])
            error(j, 1, 0, 1.0 + f)
            error(j, 1, 2, -f)
        if not joint:
            for j in (1, 2):
                error(j, 0, 0, 1.0 + KJ[j])
                error(j, 1, 0, -KJ[j])
    return W.reshape(LAGS, 3, LAGS * 3)


PREDICT = predictor_weights()
PREDICT_JOINT = predictor_weights(joint=True)

__all__ = ["GAMMA1", "GAMMA2", "TRIPLE_JUMP", "KERNEL", "CENTRES", "PREDICT", "PREDICT_JOINT"]
