"""Matrix Lie groups SO(3), SE(2), SE(3) with one API, and unit quaternions.

Each group module (:mod:`.so3`, :mod:`.se2`, :mod:`.se3`) exports the same names, batched over
leading axes (algebra vectors (..., DIM), group matrices (..., n, n), tangent maps (..., DIM, DIM)):

=====================  =====================================================================
``DIM``                dimension of the algebra (3, 3, 6)
``identity(batch)``    identity element stacked over ``batch``
``hat``, ``vee``       algebra vector ↔ matrix
``exp``, ``log``       exponential map and its principal inverse
``cay``, ``cay_inv``   matrix Cayley transform (I − ξ̂/2)⁻¹(I + ξ̂/2) and its inverse
``inverse``            g⁻¹
``compose(g, h)``      g h
``act(g, points)``     g acting on points of R³ (SO(3), SE(3)) or R² (SE(2))
``ad``, ``Ad``         adjoint matrices: (ad_ξ η)^ = [ξ̂, η̂], (Ad_g η)^ = g η̂ g⁻¹
``dexp``, ``dcay``     tangents of exp and cay
``dexp_inv``, ``dcay_inv``  their inverses: the maps C_τ = dτ⁻¹ a variational integrator pairs with τ
``dexp_inv_series``    dexp⁻¹ truncated after ad²: I − ½ ad + ad²/12
``dexp_inv_linear``    dexp⁻¹ truncated after ad: I − ½ ad
=====================  =====================================================================

**Every tangent map is right-trivialised** (Kobilarov, Crane & Desbrun 2009): for τ : 𝔤 → G,
dτ_ξ δ = (Dτ(ξ)·δ) τ(ξ)⁻¹, so dexp_ξ = Σ_j ad_ξʲ/(j + 1)!. The left-trivialised tangent at ξ is
the right-trivialised one at −ξ. Conventions and formulas: ``docs/equations.md``, "Conventions"
and "Group difference maps τ and their tangents".

Group-specific extras keep their own names: ``se2.from_pose`` / ``se2.to_pose`` (poses (θ, x, y));
``se3.make``, ``se3.rotation``, ``se3.translation``, the paper's Cayley variant ``se3.cay_paper``
and the SE(3) Cayley translation blocks ``se3.B_cay``, ``se3.B_cay_paper``; ``so3.hat_polynomial``.
:mod:`.quaternion` holds unit quaternions (w, x, y, z), Blender's order.
"""
