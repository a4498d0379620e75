"""Device functions that call themselves, directly or through others (issue 35 item 1):
typing by fixed point or a ``-> dtype`` annotation, real calls on every device, and the
'stack_size' limit with a LaunchError, not a crash, past it."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison


@simt.device
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@simt.device
def fib(n):
    if n >= 2:                       # the recursive return comes first: typed in pass 2
        return fib(n - 1) + fib(n - 2)
    return n


@simt.device
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@simt.device
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@simt.kernel
def numbers(x, facts, fibs, evens):
    i = simt.grid(1)
    if i < x.shape[0]:
        facts[i] = fact(x[i])
        fibs[i] = fib(x[i])
        evens[i] = is_even(x[i])


def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def test_factorial_fibonacci_and_mutual_recursion(device, rng):
    _skip_on_gpus(device)
    x = rng.integers(0, 19, size=45).astype(np.int64)
    facts, fibs, evens = poison(45, np.int64), poison(45, np.int64), poison(45, np.bool_)
    evens[:] = x % 2 == 1                        # poison: the opposite of the answer
    numbers[2, 32](x, facts, fibs, evens)
    np.testing.assert_array_equal(facts, [_fact(int(n)) for n in x])
    np.testing.assert_array_equal(fibs, [_fib(int(n)) for n in x])
    np.testing.assert_array_equal(evens, x % 2 == 0)


# a binary tree in arrays: node k's children are left[k] and right[k] (-1: none)
@simt.device
def subtree_sum(values, left, right, k):
    total = values[k]
    if left[k] >= 0:
        total += subtree_sum(values, left, right, left[k])
    if right[k] >= 0:
        total += subtree_sum(values, left, right, right[k])
    return total


@simt.device
def depth(left, right, k):
    d = 1
    if left[k] >= 0:
        d = max(d, 1 + depth(left, right, left[k]))
    if right[k] >= 0:
        d = max(d, 1 + depth(left, right, right[k]))
    return d


@simt.kernel
def tree_walk(values, left, right, sums, depths):
    k = simt.grid(1)
    if k < values.shape[0]:
        sums[k] = subtree_sum(values, left, right, k)
        depths[k] = depth(left, right, k)


def _random_tree(rng, n):
    left, right = np.full(n, -1, np.int32), np.full(n, -1, np.int32)
    for child in range(1, n):
        parent = int(rng.integers(0, child))
        while left[parent] >= 0 and right[parent] >= 0:
            parent = int(rng.integers(0, child))
        if left[parent] < 0:
            left[parent] = child
        else:
            right[parent] = child
    return left, right


def test_tree_walk(device, rng):
    _skip_on_gpus(device)
    n = 70
    values = rng.standard_normal(n).astype(np.float32)
    left, right = _random_tree(rng, n)
    sums, depths = poison(n, np.float32), poison(n, np.int32)
    tree_walk[3, 32](values, left, right, sums, depths)

    def ref(k):
        s, d = np.float64(values[k]), 1
        for c in (left[k], right[k]):
            if c >= 0:
                cs, cd = ref(c)
                s, d = s + cs, max(d, 1 + cd)
        return s, d
    expect = [ref(k) for k in range(n)]
    np.testing.assert_allclose(sums, [s for s, _ in expect], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(depths, [d for _, d in expect])


# mutual recursion whose type comes through the other function, floats
@simt.device
def halve(n, x):
    if n > 0:
        return shrink(n - 1, x) * 0.5
    return x


@simt.device
def shrink(n, x):
    if n > 0:
        return halve(n - 1, x) - 1.0
    return x


# a recursive function writes its array argument: the launch copies it back
@simt.device
def fill_down(a, i):
    if i >= 0:
        a[i] = i * 2
        fill_down(a, i - 1)


@simt.kernel
def mutual_floats(n, x, out, filled):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = halve(n[i], x[i])
    if i == 0:
        fill_down(filled, filled.shape[0] - 1)


def test_mutual_float_recursion_and_writes_through_recursion(device, rng):
    _skip_on_gpus(device)
    x = rng.standard_normal(40)
    n = rng.integers(0, 9, size=40).astype(np.int32)
    out, filled = poison(40, np.float64), poison(13, np.int64)
    mutual_floats[2, 32](n, x, out, filled)

    def ref(k, v, f):
        if k == 0:
            return v
        return ref(k - 1, v, not f) * 0.5 if f else ref(k - 1, v, not f) - 1.0
    np.testing.assert_allclose(out, [ref(int(k), float(v), True) for k, v in zip(n, x)])
    np.testing.assert_array_equal(filled, np.arange(13) * 2)


@simt.device
def forever(n):
    return forever(n + 1)


@simt.kernel
def calls_forever(out):
    out[0] = forever(1)


def test_a_type_only_recursion_gives_asks_for_an_annotation():
    with pytest.raises(simt.CompileError, match=r"(?s)cannot infer the return type of the "
                       r"recursive device function 'forever'.*-> np.int32") as info:
        calls_forever.compile("void(int32[::1])")
    assert f"test_recursion.py:{forever.pyfunc.__code__.co_firstlineno + 2}" in str(info.value)


@simt.device
def down(n) -> np.int32:
    if n == 0:
        return 0
    return down(n - 1) + 1


@simt.kernel
def how_deep(x, out):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = down(x[i])


@simt.device
def endless(n) -> np.float32:
    return endless(n + 1) + 1


@simt.kernel
def runs_forever(out):
    out[0] = endless(1)


def test_annotation_fixes_the_return_type(device):
    _skip_on_gpus(device)
    out = poison(3, np.int64)
    how_deep[1, 32](np.array([0, 5, 50], np.int64), out)
    np.testing.assert_array_equal(out, [0, 5, 50])
    assert "-> int32" in how_deep.inspect_types("void(int64[::1], int64[::1])")


@pytest.fixture
def cpu():
    """The CPU device, its 'stack_size' limit restored after the test."""
    with simt.use_device("cpu") as device:
        before = simt.get_limit("stack_size")
        yield device
        simt.set_limit("stack_size", before)


def test_stack_overflow_is_a_launch_error_on_cpu(cpu):
    out = poison(1, np.float32)
    with pytest.raises(simt.LaunchError, match=r"stack overflow in kernel 'runs_forever' "
                       r"\(device function 'endless'\): its recursion went past the "
                       r"'stack_size' limit \(262144 bytes\)") as info:
        runs_forever[1, 1](out)
    def_line = endless.pyfunc.__code__.co_firstlineno + 1       # below the decorator
    assert f"test_recursion.py:{def_line}" in str(info.value)
    assert "simt.set_limit('stack_size'" in str(info.value)
    # the limit is read at run time: a smaller one stops a recursion that ran before
    deep = np.array([1, 200], np.int64)
    out = poison(2, np.int64)
    how_deep[1, 2](deep, out)
    np.testing.assert_array_equal(out, deep)
    simt.set_limit("stack_size", 1024)
    assert simt.get_limit("stack_size") == 1024
    with pytest.raises(simt.LaunchError, match=r"thread \(1, 0, 0\)") as info:
        how_deep[1, 2](deep, poison(2, np.int64))
    assert "limit (1024 bytes)" in str(info.value)
    with pytest.raises(simt.CudaError, match="at most"):
        simt.set_limit("stack_size", 1 << 30)


def test_stack_overflow_is_a_launch_error_on_sim():
    with simt.use_device("sim"), pytest.raises(
            simt.LaunchError, match=r"stack overflow in kernel 'runs_forever' "
                                    r"\(device function 'endless'\)"):
        runs_forever[1, 1](poison(1, np.float32))


def test_only_recursive_functions_pay_for_the_guard():
    with simt.use_device("cpu"):
        _guards_on_the_cpu()


def _guards_on_the_cpu():
    recursive = numbers.llvm_ir("void(int64[::1], int64[::1], int64[::1], bool[::1])")
    assert "llvm.frameaddress" in recursive
    plain = how_deep.llvm_ir("void(int64[::1], int64[::1])").replace(
        "simt_cpu_stack_limit", "")
    assert "frameaddress" in plain          # down() recurses: it is guarded ...
    assert "frameaddress" not in _plain_kernel.llvm_ir("void(float32[::1])")   # ... this not


@simt.device
def twice(v):
    return v * 2


@simt.kernel
def _plain_kernel(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] = twice(a[i])


@simt.device
def synced(n):
    simt.syncthreads()
    if n > 0:
        synced(n - 1)


@simt.kernel
def recursion_with_barrier(out):
    synced(3)
    out[0] = 1


def test_a_recursive_function_with_a_barrier_is_refused_on_cpu(cpu):
    with pytest.raises(simt.NotSupportedError, match=r"device function 'synced'.*calls "
                       r"itself.*holds barriers"):
        recursion_with_barrier[1, 32](poison(1, np.int32))


def _skip_on_gpus(device):
    if device.kind == "cuda":
        pytest.skip("recursion is refused on GPUs (test_gpus_refuse_recursive_kernels)")


def test_gpus_refuse_recursive_kernels(device):
    """On the H200 (2026-12-02) recursive kernels faulted or did not load: a GPU refuses
    them at load, before anything can harm the context (docs/kernel-language.md)."""
    if device.kind != "cuda":
        pytest.skip("the cpu and sim devices run recursion (the tests above)")
    x = np.arange(8, dtype=np.int64)
    with pytest.raises(simt.NotSupportedError, match="recursively.*cpu and sim devices"):
        numbers[1, 8](x, poison(8, np.int64), poison(8, np.int64), poison(8, np.bool_))


def test_ptx_of_recursion_is_real_calls():
    ptx = numbers.inspect_ptx("void(int64[::1], int64[::1], int64[::1], bool[::1])")
    assert ".func" in ptx and "call" in ptx
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not installed")
    done = subprocess.run(["ptxas", "-arch=sm_90", "-o", "/dev/null", "-"], input=ptx,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
