"""The snakeboard's DMOC groups give the same bits wherever numpy happens to put its temporaries.

`python -m core solve samples/snakeboard_gait.toml` used to differ from one process to the next
(383–421 iterations): one entry of the complex-step Jacobian of 'dynamics (eqs. 16–17)' came out
1 ulp apart depending on the process's memory history. numpy (1.25+) multiplies complex arrays in a
SIMD loop (fused multiply-adds) unless the output *may* overlap an input, judged from each input's
extent |stride| × length, and then in a scalar loop that rounds differently. The residuals read the
local coordinates as strided columns of the (B, 20) input, whose extents claim bytes past its end
(and every row in between): a temporary that malloc placed right there — now and then — took the
scalar loop for ``… * s * s`` (both factors complex) and shifted a Jacobian entry by 1 ulp.

To make that placement happen on purpose, each group function here is called on a copy of its input
laid out as the first columns of a wide array, with a numpy memory handler (``PyDataMem_SetHandler``,
through ctypes) that gives numpy's temporaries the spare tail of those rows — inside the extents the
overlap test attributes to the strided columns. Values, Jacobians and Hessians must equal, bit for
bit, those computed with ordinary allocations.
"""
from __future__ import annotations

import contextlib
import copy
import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

from core.dmoc.constraints import assemble
from core.dmoc.initial_guess import initial_guess
from core.dmoc.models.snakeboard import SnakeboardModel
from core.dmoc.scenario import read
from core.scenario import loads

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "snakeboard_gait.toml"

# -- a numpy memory handler that hands out given slots ---------------------------------------------------
_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_CALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_REALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _Allocator(ctypes.Structure):  # PyDataMemAllocator
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", _MALLOC), ("calloc", _CALLOC), ("realloc", _REALLOC),
                ("free", _FREE)]


class _Handler(ctypes.Structure):  # PyDataMem_Handler, version 1
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("allocator", _Allocator)]


_KEEP: list[object] = []  # handlers stay alive: arrays allocated by one free through it later


def _libc():
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.calloc.restype, libc.calloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_size_t]
    libc.realloc.restype, libc.realloc.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]
    libc.free.restype, libc.free.argtypes = None, [ctypes.c_void_p]
    return libc


def _set_handler():
    """numpy's PyDataMem_SetHandler (slot 304 of its C-API table), or None. Only for the numpy 1.x
    layout this was written against (1.22+: the handler API; 2.x moved numpy.core): a wrong slot would
    not fail cleanly, it would crash."""
    if not (np.lib.NumpyVersion(np.__version__) >= "1.22.0" and np.lib.NumpyVersion(np.__version__) < "2.0.0"):
        return None
    try:
        from numpy.core import multiarray
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        table = ctypes.cast(get(multiarray._ARRAY_API, None), ctypes.POINTER(ctypes.c_void_p))
        multiarray.get_handler_name()
        return ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table[304])
    except Exception:  # pragma: no cover - another numpy layout
        return None


@contextlib.contextmanager
def _temporaries_in(slots: list[int], size: int, log: dict):
    """Array data of at most ``size`` bytes goes to a free slot (last freed first, as malloc's bins do),
    anything larger to malloc; ``log['slots']`` counts the slot allocations."""
    set_handler, libc = _set_handler(), _libc()
    free_slots, ours = list(reversed(slots)), set(slots)

    def malloc(ctx, n):
        if n <= size and free_slots:
            log["slots"] += 1
            return free_slots.pop()
        return libc.malloc(n or 1)

    def calloc(ctx, n, e):
        if n * e <= size and free_slots:
            p = malloc(ctx, n * e)
            ctypes.memset(p, 0, n * e)
            return p
        return libc.calloc(n or 1, e or 1)

    def realloc(ctx, p, n):
        if p in ours:
            q = libc.malloc(n or 1)
            ctypes.memmove(q, p, min(n, size))
            free_slots.append(p)
            return q
        return libc.realloc(p, n)

    def free(ctx, p, n):
        if p in ours:
            free_slots.append(p)
        elif p:
            libc.free(p)

    fns = (_MALLOC(malloc), _CALLOC(calloc), _REALLOC(realloc), _FREE(free))
    handler = _Handler(b"test_slots", 1, _Allocator(None, *fns))
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new(ctypes.addressof(handler), b"mem_handler", None)
    _KEEP.append((fns, handler, capsule))
    old = set_handler(capsule)
    try:
        yield
    finally:
        set_handler(old)


def _placed(fun, log: dict):
    """fun on a copy of its (n, L) input held as the first L columns of an (n, L + w) array, numpy's
    temporaries allocated in the spare w columns of its rows (within the strided columns' extents)."""
    def f(X, *params):
        X = np.asarray(X)
        n, L = X.shape
        w = n * 2 + 8  # a complex vector of n (and a margin), per row
        wide = np.zeros((n, L + w), dtype=X.dtype)
        wide[:, :L] = X
        with _temporaries_in([wide[k, L:].ctypes.data for k in range(n)], w * X.itemsize, log):
            out = fun(wide[:, :L], *params)
        out = np.array(out, copy=True)  # (out of the slots before ``wide`` goes)
        return out
    return f


# -- the problem -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def snake():
    if _set_handler() is None:
        pytest.skip("numpy's memory handler API is not reachable")
    text = re.sub(r"(?m)^steps = \d+", "steps = 30", SAMPLE.read_text())
    setup = read(loads(text), "scipy")
    nlp = assemble(setup.model, setup.spec)
    z0 = nlp.reduce(initial_guess(setup.model, setup.spec))
    # the initial guess and random points around it (a 1-ulp discrepancy needs the two roundings of a
    # product to differ: a few entries per thousand; these points have some on this machine)
    ys = [nlp.full(z0)]
    for seed in range(1, 6):
        rng = np.random.default_rng(seed)
        z = z0 + 0.3 * rng.standard_normal(z0.shape) * np.maximum(np.abs(z0), 0.3)
        ys.append(nlp.full(np.clip(z, nlp.lb, nlp.ub)))
    model = setup.model
    assert isinstance(model, SnakeboardModel)
    groups = [b.group for b in nlp._blocks] + [model.speed_group(np.arange(model.N + 1), -1.0, 1.0, "speed")]
    assert "dynamics (eqs. 16–17)" in [g.name for g in groups]
    return groups, ys


def test_the_slot_handler_places_temporaries():
    if _set_handler() is None:
        pytest.skip("numpy's memory handler API is not reachable")
    log = {"slots": 0}
    a = np.arange(40.0).reshape(20, 2)
    out = _placed(lambda X: (X[:, 0] * X[:, 1] + 1.0)[:, None], log)(a)
    assert log["slots"] >= 2 and np.array_equal(out[:, 0], a[:, 0] * a[:, 1] + 1.0)
    from numpy.core.multiarray import get_handler_name
    assert get_handler_name() == "default_allocator"


def test_values_and_jacobians_do_not_depend_on_where_temporaries_go(snake):
    groups, ys = snake
    for g in groups:
        log = {"slots": 0}
        placed = copy.copy(g)
        placed.fun = _placed(g.fun, log)
        for i, y in enumerate(ys):
            X = y[g.idx]
            v, vp = g.values(X), placed.values(X)
            J, Jp = g.jacobian(X), placed.jacobian(X)
            assert vp.tobytes() == v.tobytes(), (g.name, i, np.argwhere(vp != v)[:5])
            assert Jp.tobytes() == J.tobytes(), (g.name, i, np.argwhere(Jp != J)[:5])
        assert log["slots"] > 0, g.name


def test_hessians_do_not_depend_on_where_temporaries_go(snake):
    groups, ys = snake
    rng = np.random.default_rng(0)
    for g in groups:
        if g.linear or g.hess is not None:
            continue
        X = ys[1][g.idx][:3]  # (a few instances: the function sees 2 × colours × L points per instance)
        lam = rng.standard_normal((X.shape[0], g.m))
        log = {"slots": 0}
        placed = copy.copy(g)
        placed.fun = _placed(g.fun, log)
        placed._fd_plan = None
        H, Hp = g.hessian(X, lam), placed.hessian(X, lam)
        assert log["slots"] > 0, g.name
        assert Hp.tobytes() == H.tobytes(), (g.name, np.argwhere(Hp != H)[:5])
