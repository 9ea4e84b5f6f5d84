"""Certified optimality: upper bounds on the unknown optimum of nonnegative sparse PCA.

``OPT = max_{x in S_k^n} x^T A x`` with ``S_k^n = {x : ||x|| = 1, x >= 0,
||x||_0 <= k}``.  Every function here returns numbers proven ``>= OPT`` (the
proof of each bound is in the docstring of the function computing it), the
minimum of them is the certificate, and ``lower / upper`` is the certified
fraction of the optimum reached by the best known feasible ``x``.

Bounds (names as they appear in ``Certificate.bounds``; the cheap ones are declared once in
:data:`nspca_core.certificates.bounds.BOUNDS` and every driver loops over that list):

``lambda1``
    ``lambda_max(A)`` (``BOUNDS``).
``exact(k<=2)``
    ``OPT`` itself for ``k <= 2`` by enumerating the ``n(n-1)/2`` pairs.
``paper(d=.)`` / ``paper-enet(d=.)``
    Asteris et al. 2014: ``OPT_d + lambda_{d+1}`` (:func:`paper_bound`; d = 1 in ``BOUNDS``).
``residual(d=.)``
    ``OPT_d + min(lambda_{d+1}, max_i sum of the k largest of ((A - A_d)_+)_i)`` (d = 1 in
    ``BOUNDS``).
``dnn``
    The doubly-nonnegative dual ``lambda_max(A + N - mu 1 1^T) + mu k``
    (:mod:`nspca_core.certificates.dnn`), strengthened by sparsity cuts: for any vectors
    ``c_l`` and weights ``w_l >= 0``, ``OPT <= lambda_max(A + N - mu 1 1^T -
    sum_l w_l c_l c_l^T) + mu k + sum_l w_l beta_k(c_l)`` with
    ``beta_k(c) = max(s_k(c_+^2), s_k(c_-^2)) >= (c^T x)^2`` on ``S_k^n``
    (``s_k`` = sum of the k largest; proof in ``_dnn.cut_rhs``).  The ``c_l``
    come in cutting-plane rounds: the k-support directions
    (:func:`nspca_core.certificates.dnn.ksupport_cuts`) of the top Ritz vectors of the dual
    matrix, i.e. of where the relaxation's mass lives.
``dnn(tangent)``
    In :func:`certify_path`: the DNN dual point of another k evaluated at this
    k.  ``M = A + N - mu 1 1^T - sum_l w_l c_l c_l^T`` does not depend on k,
    so one rigorous ``lambda_max(M)`` gives ``lambda_max(M) + mu k + sum_l
    w_l beta_k(c_l) >= OPT_k`` at every k (:func:`nspca_core.certificates.dnn.dnn_tangent`).
``anchored``
    Collatz–Wielandt row sums taken from the optimum's largest entry and
    iterated (:mod:`nspca_core.certificates.anchor`): with ``rho = x / max_i x_i`` for an
    optimal x, stationarity on its support gives ``(OPT - A_ll) rho_l <=``
    the sum of its ``k - 1`` largest ``(A_lm)_+ rho_m``; bounds on rho that
    fall below 1 everywhere leave no room for the largest entry, refuting
    ``OPT > tau``.  Tight at small k, where the DNN is weakest; tried at every k >= 3 (its counted
    cost is at most a DNN run's, :func:`nspca_core.certificates._settings.anchor_affordable`).
``anchored(branch)``
    The same test with branch and bound on the support for each largest
    entry it leaves standing (:func:`nspca_core.certificates.anchor._refute_anchor`):
    nodes fix members and non-members of the support, which sharpens every
    row sum.  Tried at ``lower (1 + OPTIMAL_TOLERANCE/2)`` (a proof of
    optimality), then at ``1.01 lower``.
``split``
    Large n: ``B_S + B_T`` over a screened feature set S and its complement,
    or better the sparsity-coupled ``max_j B_S(k - j) + B_T(j)`` (S's DNN dual
    point bounds every sparsity at once) (:func:`_certify_split`); where a term
    binds at a sparsity i of S, the anchored row sums at i sharpen ``B_S(i)``
    (:func:`.coupled._coupled_refined`, at any sparsity, by counted cost; "auto": every binding
    sparsity in one joint test, :func:`nspca_core.certificates.anchor.anchored_joint_test`, and above
    k = 16 on thin data S's own bound from the anchored row sums alone first, the DNN on S only where
    that falls short: :func:`.coupled.light_S`), and each term is
    ``lambda_max([[B_S, C], [C, B_T]])`` with C bounding the cross covariance of
    the two parts (:mod:`nspca_core.certificates.cross`), never above the sum.
``monotone``
    In :func:`certify_path`: a bound for ``k' >= k`` is a bound for ``k``
    (:func:`nspca_core.certificates.monotone.monotone_envelope`; ``info["from_k"]`` says which
    k proved the upper and the lower side).
``exact(branch)``
    ``effort="exact"`` (:mod:`nspca_core.certificates.exact`): branch and bound over supports
    (members / non-members), node bounds the anchored row sums with the node's members and the
    DNN dual point restricted to the node's features, leaves ``J = I`` exact; ``OPT <= tau``
    proved when every node is refuted.  Also inside the split bound on its screened set S.
    Nodes are taken largest bound first, so the tree's bound (its open nodes') falls as it goes;
    ``time_limit`` bounds the whole call (:mod:`nspca_core.certificates.budget`) and a callback
    taking a keyword ``bound`` gets the best bound proved so far.

Several components with disjoint supports: :func:`certify_components`
(:mod:`nspca_core.certificates.components`: Ky Fan, c x single, their mix, and the
c-component DNN dual ``dnn(c)``).

Eigenvalues entering a bound are LAPACK's plus a stated tolerance, or a Ritz
guess proved by a Cholesky factorization of ``guess I - M`` plus its rounding
allowance (see :func:`nspca_core.certificates.dnn_lmax.lmax_upper`), never Lanczos/Ritz
estimates alone.
"""

from __future__ import annotations

from ._settings import EFFORTS, OPTIMAL_TOLERANCE
from .bounds import apriori_guarantee, paper_bound
from .components import certify_components
from .monotone import monotone_envelope
from .path import certify_path
from .route import _certify_cov as certify_cov  # the internal API of nspca_core.api (validated Cov in)
from .route import certify

__all__ = ["certify", "certify_path", "certify_components", "monotone_envelope", "apriori_guarantee",
           "paper_bound", "EFFORTS", "OPTIMAL_TOLERANCE"]
