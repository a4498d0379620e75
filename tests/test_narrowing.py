"""narrowing=True (issue 34 item 5): an implicit integer conversion to a narrower type
that changes the value is a NarrowingConversionError naming the kernel, the line, the
block and thread, the value and both types (UBSan's implicit-integer-truncation). Off by
default, since CUDA defines the wrap; explicit conversions are never reported.
"""
import numpy as np
import pytest

import simt
from conftest import poison, random_array, marked_line
from simt import threadIdx

FILE = __file__.rsplit("/", 1)[-1]


def line(marker):
    return marked_line(__file__, marker)


@pytest.fixture(params=["cpu-checked", "cpu", "sim"])
def narrowing(request):
    """A device with narrowing=True: cpu in checked mode and not, and sim."""
    options = {"narrowing": True, **({"checks": True} if request.param == "cpu-checked" else {})}
    with simt.use_device(request.param.split("-")[0], **options) as device:
        yield device


def run(kernel, *args, block=4):
    kernel[1, block](*args)
    simt.synchronize()


@simt.kernel
def triple_into(big, out):
    i = threadIdx.x
    out[i] = big[i] * 3                                        # <- store


@simt.kernel
def triple_explicit(big, out):
    i = threadIdx.x
    out[i] = np.int32(big[i] * 3)


@simt.kernel
def offset_by(n, out):
    i = threadIdx.x
    out[i] = n + i                                             # <- argument


@simt.device
def low_byte(v):
    return v


@simt.kernel
def bytes_of(values, out):
    i = threadIdx.x
    out[i] = low_byte(values[i])                               # <- unsigned


def test_a_store_that_does_not_fit_is_reported(narrowing):
    big = np.array([1, -2, 3, 2 ** 31], np.int64)
    out = poison(4, np.int32)
    with pytest.raises(simt.NarrowingConversionError) as info:
        run(triple_into, big, out)
    error = info.value
    assert (error.kernel, error.line, error.block, error.thread) == (
        "triple_into", line("store"), (0, 0, 0), (3, 0, 0))
    assert (error.value, error.result, error.source, error.target) == (
        3 * 2 ** 31, np.int64(3 * 2 ** 31).astype(np.int32), "int64", "int32")
    text = str(error)
    assert text.startswith("Narrowing conversion in kernel 'triple_into': block (0, 0, 0) "
                           "thread (3, 0, 0) converts 6442450944 (int64) to int32 at "
                           f"{FILE}:{line('store')}, which changes it to -2147483648")
    assert "out[i] = big[i] * 3" in text and "np.int32(v)" in text


def test_values_that_fit_and_explicit_conversions_run_clean(narrowing, rng):
    big = random_array(rng, 4, np.int64) * 1000
    out = poison(4, np.int32)
    run(triple_into, big, out)
    np.testing.assert_array_equal(out, (big * 3).astype(np.int32))
    wide = np.array([1, -2, 3, 2 ** 31], np.int64)
    run(triple_explicit, wide, out)                     # the user asked for the wrap
    np.testing.assert_array_equal(out, (wide * 3).astype(np.int32))


def test_an_int64_argument_narrowed(narrowing):
    out = poison(4, np.int32)
    with pytest.raises(simt.NarrowingConversionError) as info:
        run(offset_by, 2 ** 31 - 2, out)
    error = info.value
    assert error.line == line("argument") and error.thread == (2, 0, 0)
    assert (error.value, error.result) == (2 ** 31, -2 ** 31)


@pytest.mark.parametrize("dtype, target, value, result", [
    (np.uint64, np.uint8, 2 ** 63 + 7, 7),
    (np.int64, np.uint32, -1, 2 ** 32 - 1),
    (np.uint64, np.int32, 2 ** 31, -2 ** 31),
    (np.int32, np.int8, 200, -56),
], ids=["uint64-uint8", "int64-uint32", "uint64-int32", "int32-int8"])
def test_signedness_and_widths(narrowing, dtype, target, value, result):
    values = np.array([1, 2, value, 3], dtype)
    out = poison(4, target)
    with pytest.raises(simt.NarrowingConversionError) as info:
        run(bytes_of, values, out)
    error = info.value
    assert error.line == line("unsigned") and error.thread == (2, 0, 0)
    assert (error.value, error.result) == (value, result)
    assert (error.source, error.target) == (np.dtype(dtype).name, np.dtype(target).name)


def test_off_by_default_the_value_wraps_as_in_cuda(device):
    big = np.array([1, -2, 3, 2 ** 31], np.int64)
    out = poison(4, np.int32)
    run(triple_into, big, out)
    np.testing.assert_array_equal(out, (big * 3).astype(np.int32))


def test_kernel_option_and_cache_key():
    @simt.kernel(narrowing=True)
    def store(big, out):
        out[threadIdx.x] = big[threadIdx.x]                    # <- kernel_option

    with simt.use_device("cpu"):
        with pytest.raises(simt.NarrowingConversionError) as info:
            run(store, np.array([2 ** 40], np.int64), poison(1, np.int32), block=1)
    assert info.value.line == line("kernel_option")
    def nothing(a):
        pass
    with pytest.raises(TypeError, match="narrowing is True or False"):
        simt.kernel(narrowing="yes")(nothing)
    from simt.compiler.options import CompileOptions
    assert "narrowing" not in CompileOptions().key()          # old cache entries stay valid
    assert "narrowing=True" in CompileOptions(narrowing=True).key()
