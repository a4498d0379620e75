"""What a kernel may read from Python (docs/kernel-globals.md, issue 12 item 3).

Numbers, strings and tuples read from module globals, closures and attributes of modules
and classes are compile-time constants: frozen at a function's first compile in a process
(every later signature and device sees the same value) and keyed by value on disk (a new
process sees a new value: tests/test_cache.py). Objects, classes and modules are namespaces whose attributes follow the same rule.
Mutable containers are a CompileError."""
import math
import sys
import types

import numpy as np
import pytest

import simt
from simt.runtime import cache

SCALE = 2.0


@simt.kernel
def scaled(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] = a[i] * SCALE


def test_a_module_constant_is_frozen_at_the_first_compile(device, monkeypatch):
    """Issue 12: after ``SCALE = 5.0`` a compiled signature kept 2.0 but a new signature
    took 5.0: one process gave two answers."""
    a = np.ones(8, np.float32)
    scaled[1, 32](a)
    assert (a == 2.0).all()
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 5.0)
    a = np.ones(8, np.float32)
    scaled[1, 32](a)
    assert (a == 2.0).all()
    b = np.ones(8, np.float64)                   # a new signature: the same value
    scaled[1, 32](b)
    assert (b == 2.0).all()


class Cfg:
    N = 3
    OFFSETS = (1, 10)


PARAMS = types.SimpleNamespace(scale=3, noise=np.random.rand(100))   # noise: never read


@simt.kernel
def namespaced(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] = Cfg.N + Cfg.OFFSETS[1] + PARAMS.scale + math.pi * 0


def test_attributes_of_modules_classes_and_objects_are_keyed_by_value(device, monkeypatch):
    """They follow the rule of names: keyed by value, frozen at the first compile."""
    a = np.zeros(4, np.int64)
    namespaced[1, 32](a)
    assert (a == 16).all()
    monkeypatch.setattr(PARAMS, "scale", 5)
    b = np.zeros(4, np.float64)
    namespaced[1, 32](b)
    assert (b == 16).all()
    arg_types, _warp = next(iter(namespaced.ir_cache))        # (argument types, warp facts)
    typed = namespaced.typed_ir(arg_types)
    deps = {name: value for _, name, value in cache.dependencies(typed)}
    assert deps["Cfg.N"] == 3 and deps["Cfg.OFFSETS"] == (1, 10) and deps["math.pi"] == math.pi
    assert deps["PARAMS.scale"] == 3 and "PARAMS.noise" not in deps
    other = types.SimpleNamespace(scale=3, noise=np.random.rand(100))
    assert cache.value_key(PARAMS) == cache.value_key(other)     # not by its repr


LIST = [1.0, 2.0]
DICT = {"k": 1.0}
ARRAY = np.arange(4.0)
SET = {1}
NESTED = (1, [2])


class Table:
    VALUES = [1.0, 2.0]


@simt.kernel
def reads_list(a):
    a[0] = LIST[1]


@simt.kernel
def reads_dict(a):
    a[0] = DICT["k"]


@simt.kernel
def reads_array_item(a):
    a[0] = ARRAY[2]


@simt.kernel
def reads_array_shape(a):
    a[0] = ARRAY.shape[0]


@simt.kernel
def reads_set(a):
    a[0] = len(SET)


@simt.kernel
def reads_nested(a):
    a[0] = NESTED[1][0]


@simt.kernel
def reads_class_list(a):
    a[0] = Table.VALUES[0]


@pytest.mark.parametrize("kernel, name", [
    (reads_list, "LIST"), (reads_dict, "DICT"), (reads_array_item, "ARRAY"),
    (reads_array_shape, "ARRAY"), (reads_set, "SET"), (reads_nested, "NESTED"),
    (reads_class_list, "Table.VALUES")])
def test_mutable_containers_are_a_compile_error(device, kernel, name):
    """Issue 12: their contents were baked in silently, and later changes ignored."""
    with pytest.raises(simt.CompileError) as info:
        kernel[1, 1](np.zeros(1))
    message = str(info.value)
    assert f"'{name}'" in message and "argument" in message and "simt.Constant" in message


CONSTANT = simt.Constant(np.array([4.0, 5.0]))
HOST = np.array([6.0, 7.0])


@simt.kernel
def reads_memory(a):
    baked = simt.const.array_like(HOST)
    a[0] = CONSTANT[1] + baked[1]


def test_constants_and_array_like_still_read(device):
    a = np.zeros(1)
    reads_memory[1, 1](a)
    assert a[0] == 12.0


ETA = np.float64(0.3)          # a NumPy scalar keeps its dtype (API.md section 2)
LITERAL_ETA = 0.3              # a Python float stays weak


def _momentum():
    decay = np.complex128(0.5)                  # a closure NumPy scalar: strong too
    return lambda: decay


DECAY = _momentum()()


@simt.kernel
def backprop_update(w, grad, w_weak, w_decay):
    i = simt.grid(1)
    if i < w.shape[0]:
        w[i] = w[i] - ETA * grad[i]
        w_weak[i] = w_weak[i] - LITERAL_ETA * grad[i]
        w_decay[i] = (DECAY * grad[i]).real


def test_a_numpy_scalar_global_keeps_its_dtype(device):
    """Issue 33: ``ETA = np.float64(0.3)`` was a weak literal (np.float64 subclasses float),
    so ``ETA * grad_f32`` computed in float32 where NumPy 2 computes in float64."""
    grad = np.linspace(-1, 1, 64).astype(np.float32)
    w = np.ones(64, np.float64)
    w_weak = np.ones(64, np.float64)
    w_decay = np.zeros(64, np.float64)
    backprop_update[2, 32](w, grad, w_weak, w_decay)
    assert (ETA * grad).dtype == np.float64
    np.testing.assert_array_equal(w, np.ones(64) - ETA * grad)
    assert (LITERAL_ETA * grad).dtype == np.float32
    np.testing.assert_array_equal(w_weak, np.ones(64) - LITERAL_ETA * grad)
    np.testing.assert_array_equal(w_decay, (DECAY * grad).real)
    typed = backprop_update.inspect_types()
    assert "math.fma{contracted=True}(-float64(0.3), float64(" in typed     # one fma
    assert "float32(0.30000001192092896) * " in typed
