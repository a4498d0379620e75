"""Variables assigned on some paths only (issue 33, items 4 and 13): a read that no path
assigns is a CompileError; a read that some paths leave unassigned compiles with one
CompileWarning, and checked mode (cpu with checks=True) and the sim device report a
thread that really reads it unassigned. Lines are found by ``# <-`` markers."""
import warnings

import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import CompileError, CompileWarning, UninitializedReadError, threadIdx

FILE = __file__.rsplit("/", 1)[-1]

pytestmark = pytest.mark.filterwarnings("ignore::simt.CompileWarning")


def line(marker):
    return marked_line(__file__, marker)


@pytest.fixture(params=["cpu-checked", "sim"])
def checking(request):
    """The devices that report a thread reading a variable it did not assign."""
    spec = request.param
    options = {"checks": True} if spec == "cpu-checked" else {}
    with simt.use_device(spec.split("-")[0], **options) as device:
        yield device


# numba-cuda's pattern: a value set in every arm of an if/elif chain, no else
@simt.kernel
def by_quarter(x, out):
    i = simt.grid(1)
    if i % 4 == 0:
        v = x[i] + 1.0
    elif i % 4 == 1:
        v = x[i] * 2.0
    elif i % 4 == 2:
        v = x[i] - 3.0
    elif i % 4 == 3:
        v = -x[i]
    out[i] = v                                                   # <- by_quarter


def quarter_reference(x):
    i = np.arange(x.size)
    return np.select([i % 4 == 0, i % 4 == 1, i % 4 == 2], [x + 1, x * 2, x - 3], -x)


def test_if_elif_chain_without_else_runs(device, rng):
    x = random_array(rng, 64, np.float32)
    out = poison(64, np.float32)
    by_quarter[1, 64](x, out)
    np.testing.assert_array_equal(out, quarter_reference(x))


def test_if_elif_chain_without_else_runs_checked(checking, rng):
    """Every thread takes an assigning arm: checked mode reports nothing."""
    x = random_array(rng, 64, np.float32)
    out = poison(64, np.float32)
    by_quarter[2, 32](x, out)
    simt.synchronize()
    np.testing.assert_array_equal(out, quarter_reference(x))


@simt.kernel
def three_of_four(x, out):
    i = threadIdx.x
    if i % 4 == 0:
        v = x[i]
    elif i % 4 == 1:
        v = x[i] * 2.0
    elif i % 4 == 2:
        v = x[i] - 3.0
    out[i] = v                                                   # <- three_of_four


def test_thread_taking_no_arm_is_reported(checking):
    with pytest.raises(UninitializedReadError) as info:
        three_of_four[1, 8](np.ones(8, np.float32), np.zeros(8, np.float32))
        simt.synchronize()
    error = info.value
    first = str(error).splitlines()[0]
    assert first.startswith("Unassigned variable in kernel 'three_of_four'")
    assert "reads variable 'v'" in first and f"{FILE}:{line('three_of_four')}" in first
    assert (error.block, error.thread) == ((0, 0, 0), (3, 0, 0))     # the first with i % 4 == 3
    assert error.variable == "v" and error.line == line("three_of_four")
    assert "assign it on every path" in str(error)


# item 4: the loop variable after a loop that ran zero times
@simt.kernel
def last_index(x, n):
    for i in range(n):
        x[1] = i
    x[0] = i                                                     # <- last_index


def test_zero_trip_loop_variable_is_reported(checking):
    x = np.zeros(2, np.int64)
    last_index[1, 1](x, 5)                          # the loop ran: nothing to report
    simt.synchronize()
    assert list(x) == [4, 4]
    with pytest.raises(UninitializedReadError, match="reads variable 'i'") as info:
        last_index[1, 1](x, 0)
        simt.synchronize()
    assert info.value.line == line("last_index") and info.value.thread == (0, 0, 0)


def test_zero_trip_loop_variable_compiles_unchecked():
    """Unchecked, the read is undefined (as in C): it compiles and runs."""
    with simt.use_device("cpu"):
        x = np.zeros(2, np.int64)
        last_index[1, 1](x, 3)
        assert list(x) == [2, 2]
        last_index[1, 1](x, 0)                      # reads whatever is there


@simt.kernel
def across_barrier(x, out):
    """The flag of a variable lives per thread across a barrier, as the variable does."""
    sh = simt.shared.array(64, np.float32)
    i = threadIdx.x
    sh[i] = x[i]
    if x[i] > 0:
        v = x[i] * 2.0
    simt.syncthreads()
    if x[i] > 0:
        out[i] = v + sh[63 - i]
    else:
        out[i] = sh[63 - i]
    simt.syncthreads()
    out[i] += v                                                  # <- across_barrier


def test_unassigned_read_across_a_barrier(checking, rng):
    x = np.abs(random_array(rng, 64, np.float32))
    out = poison(64, np.float32)
    across_barrier[1, 64](x, out)
    simt.synchronize()
    np.testing.assert_allclose(out, x * 2 + x[::-1] + x * 2, rtol=1e-6)
    x[37] = -1.0
    with pytest.raises(UninitializedReadError, match="reads variable 'v'") as info:
        across_barrier[1, 64](x, out)
        simt.synchronize()
    assert info.value.thread == (37, 0, 0) and info.value.line == line("across_barrier")


@simt.device
def first_positive(x, n):
    for k in range(n):
        if x[k] > 0:
            found = k
            break
    return found                                                 # <- first_positive


@simt.kernel
def find(x, out):
    out[threadIdx.x] = first_positive(x, x.shape[0])


def test_device_function_read_is_reported(checking):
    out = np.zeros(2, np.int64)
    find[1, 2](np.array([-1.0, 3.0]), out)
    simt.synchronize()
    assert list(out) == [1, 1]
    with pytest.raises(UninitializedReadError, match="reads variable 'found'") as info:
        find[1, 2](np.array([-1.0, -3.0]), out)
        simt.synchronize()
    assert info.value.line == line("first_positive")


@simt.device
def last_shared(sh, n):
    """Holds a barrier: inlined into the kernel (its variables renamed) on cpu and sim."""
    simt.syncthreads()
    for k in range(n):
        last = sh[k]
    return last                                                  # <- last_shared


@simt.kernel
def through_inlined(x, out, n):
    sh = simt.shared.array(32, np.float32)
    sh[threadIdx.x] = x[threadIdx.x]
    out[threadIdx.x] = last_shared(sh, n)


def test_inlined_device_function_read_is_reported_by_its_name(checking, rng):
    x = random_array(rng, 32, np.float32)
    out = poison(32, np.float32)
    through_inlined[1, 32](x, out, 5)
    simt.synchronize()
    np.testing.assert_array_equal(out, np.full(32, x[4]))
    with pytest.raises(UninitializedReadError, match="reads variable 'last' at") as info:
        through_inlined[1, 32](x, out, 0)
        simt.synchronize()
    assert info.value.line == line("last_shared") and info.value.variable == "last"


def test_no_path_assigns_is_a_compile_error():
    @simt.kernel
    def never(a):
        a[0] = y                                # noqa: F821     # <- never
        y = 1.0                                 # noqa: F841
    with pytest.raises(CompileError, match="'y' is read before it is assigned") as info:
        never[1, 1](np.zeros(1))
    assert info.value.line == line("never") and "UnboundLocalError" in str(info.value)


@pytest.mark.filterwarnings("default::simt.CompileWarning")
def test_warning_names_kernel_variable_and_line_once():
    @simt.kernel
    def maybe(a, n):
        for k in range(n):
            s = a[k]
        a[0] = s                                                 # <- maybe
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        maybe[1, 1](np.ones(4), 2)
        maybe[1, 1](np.ones(4, np.float32), 2)      # another signature: compiled again
        with simt.use_device("cpu", checks=True):
            maybe[1, 1](np.ones(4), 2)              # another compile, checked
    found = [w for w in caught if issubclass(w.category, CompileWarning)]
    assert len(found) == 1
    text = str(found[0].message)
    assert text.startswith("'s' may be read before it is assigned: it is assigned only in "
                           "a loop, which may run zero times")
    assert f"in 'maybe', {__file__}:{line('maybe')}:" in text
    assert found[0].filename == __file__ and found[0].lineno == line("maybe")


def test_unchecked_code_carries_no_flags():
    """The flags exist in checked mode only: unchecked CPU code and PTX are as before."""
    sig = "void(float32[:], float32[:])"
    with simt.use_device("cpu"):
        assert "$assigned." not in three_of_four.llvm_ir(sig)
        assert "$assigned." not in three_of_four.ptx(sig, arch="sm_90")
    with simt.use_device("cpu", checks=True):
        assert "$assigned.v" in three_of_four.llvm_ir(sig)


def test_warning_as_error_refuses_the_kernel():
    @simt.kernel
    def strict(a, n):
        for k in range(n):
            s = a[k]
        a[0] = s
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for _ in range(2):                          # each compile, not only the first
            with pytest.raises(CompileWarning, match="'s' may be read"):
                strict[1, 1](np.ones(2), 1)
