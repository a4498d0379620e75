"""Porting numba-cuda programs with ``from simt import cuda`` (issue 36 item 3): numba's
profiler calls, its device attribute names, ``for v in array`` in kernels, and numba's
negative indices under ``cuda.jit`` (``simt.kernel`` keeps CUDA's rule)."""
import numpy as np
import pytest

import simt
from simt import cuda


def test_profile_start_and_stop_do_nothing_off_the_gpu(device):
    if device.kind == "cuda":
        pytest.skip("on a GPU they call cuProfilerStart/Stop")
    cuda.profile_start()
    cuda.profile_stop()
    with cuda.profiling():
        pass


def test_numba_device_attribute_names(device):
    dev = cuda.get_current_device()
    p = device.properties
    assert (dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z) == p.max_block_dim
    assert (dev.MAX_GRID_DIM_X, dev.MAX_GRID_DIM_Y, dev.MAX_GRID_DIM_Z) == p.max_grid_dim
    assert dev.MAX_THREADS_PER_BLOCK == p.max_threads_per_block
    assert dev.MULTIPROCESSOR_COUNT == p.multiprocessor_count
    assert dev.WARP_SIZE == 32 and dev.MAX_SHARED_MEMORY_PER_BLOCK == p.shared_memory_per_block
    assert (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR) == \
        dev.compute_capability
    assert dev.MAX_REGISTERS_PER_BLOCK == p.max_registers_per_block
    assert isinstance(dev.L2_CACHE_SIZE, int) and dev.CONCURRENT_KERNELS in (0, 1)
    assert set(dev.get_device_identity()) == {"pci_domain_id", "pci_bus_id", "pci_device_id"}
    assert not hasattr(dev, "NO_SUCH_ATTRIBUTE")
    with pytest.raises(AttributeError, match="CU_DEVICE_ATTRIBUTE_"):
        dev.NO_SUCH_ATTRIBUTE
