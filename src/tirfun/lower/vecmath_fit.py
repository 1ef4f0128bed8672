"""How the polynomials of :mod:`tirfun.lower.llvm_vecmath` were computed.

Each polynomial is the minimax approximation, in relative error, of a
smooth function on a short interval, found with the Remez exchange
algorithm: start from the Chebyshev extrema as the reference points, solve
for the polynomial whose relative error alternates in sign with equal size
``E`` on them, move the references to the extrema of the error on a dense
grid, and repeat until they settle. The functions are evaluated from their
Taylor series in ``numpy.longdouble``, never by subtracting nearly equal
numbers (``(exp(r) - 1 - r) / r**2`` computed directly would lose half its
digits near 0); ``erf`` beyond 1 as ``1 - erfc`` from the C library's
``erfc``, which is accurate to its last bit.

``derive()`` gives the coefficients (rounded to double) and the relative
error that each polynomial reaches on its interval, measured on the grid;
the module's coefficients are its output, and a unit test checks that the
stored ones reach the stated error. Only numpy is needed; nothing here runs
when tirfun builds code.
"""

from __future__ import annotations

import math

import numpy as np

_L = np.longdouble

#: ``exp``'s reduced argument lies in [-ln 2 / 2, ln 2 / 2], widened a
#: little for the rounding of the reduction
EXP_INTERVAL = (-math.log(2) / 2 * 1.0001, math.log(2) / 2 * 1.0001)
#: ``log``'s ``z = s * s`` with ``s = (m - 1) / (m + 1)`` and ``m`` in
#: [sqrt(1/2), sqrt(2)): at most ``(3 - 2 sqrt 2)**2 = 17 - 12 sqrt 2``
LOG_INTERVAL = (0.0, (17 - 12 * math.sqrt(2)) * 1.0001)
#: ``sin`` and ``cos`` take ``z = r * r`` with ``|r| <= pi / 4``
TRIG_INTERVAL = (0.0, (math.pi / 4) ** 2 * 1.0001)
#: degrees: the smallest whose error keeps the float32 results within one
#: rounding of the correct ones almost everywhere (see llvm_vecmath)
EXP_DEGREE = 8
LOG_DEGREE = 5
SIN_DEGREE = 5
COS_DEGREE = 4
#: ``erf(a) = a * E(a**2)`` for ``a`` in [0, 1]; beyond, to 4 (where erf
#: rounds to 1 in float32), one polynomial in ``u = (a - c) / h`` on each
#: piece [c - h, c + h] of these
ERF_SMALL_INTERVAL = (0.0, 1.0)
ERF_SMALL_DEGREE = 10
ERF_EDGES = (1.0, 1.75, 2.5, 3.25, 4.0)
ERF_PIECE_DEGREE = 12


def exp_tail(r):
    """``(exp(r) - 1 - r) / r**2 = sum(r**(n - 2) / n!)`` for ``n >= 2``."""
    r = np.asarray(r, dtype=_L)
    total, term = np.zeros_like(r), np.full_like(r, 0.5)
    for n in range(2, 40):
        total = total + term
        term = term * r / (n + 1)
    return total


def atanh_tail(z):
    """``(atanh(s) / s - 1) / s**2 = sum(z**(n - 1) / (2n + 1))`` for
    ``n >= 1``, with ``z = s**2``."""
    z = np.asarray(z, dtype=_L)
    total, power = np.zeros_like(z), np.ones_like(z)
    for n in range(1, 40):
        total = total + power / (2 * n + 1)
        power = power * z
    return total


def sin_tail(z):
    """``(sin(r) - r) / r**3 = sum((-1)**n z**(n - 1) / (2n + 1)!)`` for
    ``n >= 1``, with ``z = r**2``."""
    z = np.asarray(z, dtype=_L)
    total, term = np.zeros_like(z), np.full_like(z, _L(-1) / 6)
    for n in range(1, 30):
        total = total + term
        term = -term * z / ((2 * n + 2) * (2 * n + 3))
    return total


def cos_tail(z):
    """``(cos(r) - 1 + r**2 / 2) / r**4 = sum((-1)**n z**(n - 2) / (2n)!)``
    for ``n >= 2``, with ``z = r**2``."""
    z = np.asarray(z, dtype=_L)
    total, term = np.zeros_like(z), np.full_like(z, _L(1) / 24)
    for n in range(2, 30):
        total = total + term
        term = -term * z / ((2 * n + 1) * (2 * n + 2))
    return total


def erf_over_x(z):
    """``erf(a) / a = 2 / sqrt(pi) * sum((-z)**n / (n! (2n + 1)))``, with
    ``z = a**2``."""
    z = np.asarray(z, dtype=_L)
    total, term = np.zeros_like(z), np.ones_like(z)
    for n in range(0, 80):
        total = total + term / (2 * n + 1)
        term = -term * z / (n + 1)
    return total * (2 / np.sqrt(_L(np.pi)))


def erf_piece(lo: float, hi: float):
    """``u -> erf(c + u h)`` on [-1, 1] for the piece [lo, hi], from the C
    library's erfc (accurate to its last bit, so ``1 - erfc`` in long
    double is accurate well beyond double)."""
    c, h = (lo + hi) / 2, (hi - lo) / 2

    def f(u):
        u = np.asarray(u, dtype=_L)
        return 1 - np.array([math.erfc(float(c + v * h)) for v in u], dtype=_L)
    return f


def relative_error(f, coefficients, lo: float, hi: float, points: int = 40001) -> float:
    """The largest ``|p(x) / f(x) - 1|`` on a Chebyshev-spaced grid of
    [lo, hi], ``p`` evaluated exactly from the (double) coefficients."""
    xs = _grid(lo, hi, points)
    p = np.polynomial.polynomial.polyval(xs, np.asarray(coefficients, dtype=_L))
    fx = f(xs)
    return float(np.max(np.abs((p - fx) / fx)))


def _grid(lo: float, hi: float, points: int):
    t = np.linspace(0.0, np.pi, points).astype(_L)
    return (_L(lo) + _L(hi)) / 2 - (_L(hi) - _L(lo)) / 2 * np.cos(t)


def remez(f, lo: float, hi: float, degree: int, iterations: int = 40,
          points: int = 40001) -> tuple[tuple[float, ...], float]:
    """The coefficients (lowest first, as doubles) of the polynomial of
    ``degree`` closest to ``f`` in relative error on [lo, hi], and that error."""
    n = degree + 2
    signs = (-1.0) ** np.arange(n)
    refs = _grid(lo, hi, n)
    xs = _grid(lo, hi, points)
    fx = f(xs)
    coefficients = np.zeros(degree + 1)
    for _ in range(iterations):
        fr = f(refs)
        # p(x_i) - f(x_i) = (-1)**i * E * f(x_i): equal relative error, alternating
        system = np.column_stack([np.vander(refs.astype(np.float64), degree + 1, increasing=True),
                                  -signs * fr.astype(np.float64)])
        solution = np.linalg.solve(system, fr.astype(np.float64))
        coefficients = solution[:-1]
        err = (np.polynomial.polynomial.polyval(xs, coefficients.astype(_L)) - fx) / fx
        picked = _alternating_extrema(err, n)
        if picked is None:
            break
        refs = xs[picked]
    return tuple(float(c) for c in coefficients), relative_error(f, coefficients, lo, hi, points)


def _alternating_extrema(err, n: int):
    """Indices of ``n`` extrema of ``err`` alternating in sign (the largest
    of each run of one sign), or None when there are fewer."""
    inner = np.nonzero((err[1:-1] - err[:-2]) * (err[2:] - err[1:-1]) <= 0)[0] + 1
    picked: list[int] = []
    for i in [0, *inner.tolist(), len(err) - 1]:
        if picked and np.sign(err[i]) == np.sign(err[picked[-1]]):
            if abs(err[i]) > abs(err[picked[-1]]):
                picked[-1] = i
        else:
            picked.append(i)
    while len(picked) > n:
        picked.pop(0 if abs(err[picked[0]]) < abs(err[picked[-1]]) else -1)
    return picked if len(picked) == n else None


def derive() -> dict[str, tuple[tuple[float, ...], float]]:
    """Every polynomial of llvm_vecmath: name -> (coefficients, relative error)."""
    return {"exp": remez(exp_tail, *EXP_INTERVAL, EXP_DEGREE),
            "log": remez(atanh_tail, *LOG_INTERVAL, LOG_DEGREE),
            "sin": remez(sin_tail, *TRIG_INTERVAL, SIN_DEGREE),
            "cos": remez(cos_tail, *TRIG_INTERVAL, COS_DEGREE),
            "erf_small": remez(erf_over_x, ERF_SMALL_INTERVAL[0], ERF_SMALL_INTERVAL[1] ** 2,
                               ERF_SMALL_DEGREE),
            **{f"erf_{k}": remez(erf_piece(lo, hi), -1.0, 1.0, ERF_PIECE_DEGREE, points=2001)
               for k, (lo, hi) in enumerate(zip(ERF_EDGES, ERF_EDGES[1:]))}}


if __name__ == "__main__":
    for name, (coefficients, error) in derive().items():
        print(f"{name}: relative error {error:.3g} (2**{math.log2(error):.1f})")
        for c in coefficients:
            print(f"    float.fromhex({c.hex()!r}),")
