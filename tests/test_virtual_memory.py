"""Virtual memory management (guide appendix E): a device array that grows in place on
a GPU; the CPU device refuses it."""
import numpy as np
import pytest

import simt
from conftest import random_array


@simt.kernel
def plus_index(a):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] += np.float32(i)


def test_cpu_device_refuses_virtual_memory():
    with simt.use_device("cpu"):
        with pytest.raises(simt.NotSupportedError,
                           match=r"virtual memory management \(appendix E\).*NVIDIA GPUs"):
            simt.VirtualMemory(1 << 20)
    with pytest.raises(ValueError, match="positive number of bytes"):
        simt.VirtualMemory(0)


def test_growing_keeps_the_address_and_the_data(device, rng):
    if device.kind != "cuda":
        pytest.skip("GPU only: test_cpu_device_refuses_virtual_memory covers the CPU")
    vm = simt.VirtualMemory(64 << 20)
    step = vm.granularity
    assert vm.reserved % step == 0 and vm.reserved >= 64 << 20 and vm.mapped == 0
    first = vm.grow(step // 2, np.float32)            # rounded up to the granularity
    assert vm.mapped == step and first.shape == (step // 4,) and first.ptr == vm.ptr
    host = random_array(rng, first.shape, np.float32)
    first.copy_from(host)
    grown = vm.grow(3 * step, np.float32)
    assert grown.ptr == first.ptr and grown.shape == (4 * step // 4,)
    np.testing.assert_array_equal(grown[:first.shape[0]].copy_to_host(), host)
    rest = random_array(rng, grown.shape[0] - first.shape[0], np.float32)
    grown[first.shape[0]:].copy_from(rest)
    plus_index[(grown.shape[0] + 255) // 256, 256](grown)
    expected = np.concatenate([host, rest]) + np.arange(grown.shape[0], dtype=np.float32)
    np.testing.assert_array_equal(grown.copy_to_host(), expected)
    with pytest.raises(simt.OutOfMemoryError, match="reserve more"):
        vm.grow(vm.reserved)
    del first, grown
    vm.free()
    assert vm.mapped == 0
