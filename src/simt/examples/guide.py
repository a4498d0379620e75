"""The CUDA C++ Programming Guide's own examples as simt code: matrix multiplication without
and with shared memory (3.2.4), two streams (3.2.6.5.1), a graph built explicitly and by
stream capture (3.2.6.6), and cooperative groups (C.3.1, C.4, C.7). docs/guide-examples.md
shows this code; tests/test_guide_examples.py runs each against NumPy."""
import numpy as np

import simt
from simt import blockDim, blockIdx, cg, gridDim, threadIdx

BLOCK_SIZE = 16


# -- 3.2.4: matrix multiplication without shared memory ---------------------------------


@simt.kernel
def mat_mul_kernel(A, B, C):
    # Each thread computes one element of C by accumulating results into c_value
    c_value = np.float32(0)
    row = blockIdx.y * blockDim.y + threadIdx.y
    col = blockIdx.x * blockDim.x + threadIdx.x
    for e in range(A.shape[1]):
        c_value += A[row, e] * B[e, col]
    C[row, col] = c_value


def mat_mul(A, B):
    """C = A @ B; the dimensions are multiples of BLOCK_SIZE, as in the guide."""
    d_A, d_B = simt.to_device(A), simt.to_device(B)
    d_C = simt.device_array((A.shape[0], B.shape[1]), np.float32)
    dim_block = simt.dim3(BLOCK_SIZE, BLOCK_SIZE)
    dim_grid = simt.dim3(B.shape[1] // dim_block.x, A.shape[0] // dim_block.y)
    mat_mul_kernel[dim_grid, dim_block](d_A, d_B, d_C)
    return d_C.copy_to_host()


# -- 3.2.4: matrix multiplication with shared memory ------------------------------------


@simt.kernel
def mat_mul_shared_kernel(A, B, C):
    block_row, block_col = blockIdx.y, blockIdx.x
    row, col = threadIdx.y, threadIdx.x
    # Each thread computes one element of the block's sub-matrix of C
    c_value = np.float32(0)
    # Loop over the sub-matrices of A and B needed for this sub-matrix of C
    for m in range(A.shape[1] // BLOCK_SIZE):
        As = simt.shared.array((BLOCK_SIZE, BLOCK_SIZE), np.float32)
        Bs = simt.shared.array((BLOCK_SIZE, BLOCK_SIZE), np.float32)
        # Each thread loads one element of each sub-matrix
        As[row, col] = A[block_row * BLOCK_SIZE + row, m * BLOCK_SIZE + col]
        Bs[row, col] = B[m * BLOCK_SIZE + row, block_col * BLOCK_SIZE + col]
        # The sub-matrices are loaded before the computation starts
        simt.syncthreads()
        for e in range(BLOCK_SIZE):
            c_value += As[row, e] * Bs[e, col]
        # The computation is done before the next sub-matrices are loaded
        simt.syncthreads()
    C[block_row * BLOCK_SIZE + row, block_col * BLOCK_SIZE + col] = c_value


def mat_mul_shared(A, B):
    """C = A @ B through BLOCK_SIZE x BLOCK_SIZE tiles in shared memory."""
    d_A, d_B = simt.to_device(A), simt.to_device(B)
    d_C = simt.device_array((A.shape[0], B.shape[1]), np.float32)
    dim_block = simt.dim3(BLOCK_SIZE, BLOCK_SIZE)
    dim_grid = simt.dim3(B.shape[1] // dim_block.x, A.shape[0] // dim_block.y)
    mat_mul_shared_kernel[dim_grid, dim_block](d_A, d_B, d_C)
    return d_C.copy_to_host()


# -- 3.2.6.5.1: two streams, each copying in, computing and copying out -----------------


@simt.kernel
def my_kernel(output, inp, size):
    i = blockIdx.x * blockDim.x + threadIdx.x
    while i < size:                        # a grid-stride loop covers any size
        output[i] = np.float32(2) * inp[i] + np.float32(1)
        i += gridDim.x * blockDim.x


def two_streams(values):
    """Each half of ``values`` goes through its own stream: copy in, my_kernel, copy out."""
    size = values.size // 2
    stream = [simt.Stream() for _ in range(2)]
    host = simt.pinned_array(2 * size, np.float32)      # cudaMallocHost
    host[:] = values
    input_dev = simt.device_array(2 * size, np.float32)
    output_dev = simt.device_array(2 * size, np.float32)
    for i in range(2):
        part = slice(i * size, (i + 1) * size)
        input_dev[part].copy_from(host[part], stream=stream[i])
        my_kernel[100, 512, 0, stream[i]](output_dev[part], input_dev[part], size)
        output_dev[part].copy_to_host(host[part], stream=stream[i])
    for i in range(2):
        stream[i].synchronize()
    return np.array(host)


# -- 3.2.6.6: a graph of four kernels, A -> B, A -> C, B -> D, C -> D --------------------


@simt.kernel
def scale_add(y, a, x):                   # y = a * x + y
    i = simt.grid(1)
    if i < y.shape[0]:
        y[i] = a * x[i] + y[i]


def graph_explicit(x, y, z, w):
    """The guide's graph built with the graph API, launched once."""
    x, y, z, w = (simt.to_device(v) for v in (x, y, z, w))
    cfg = ((x.size + 255) // 256, 256)
    graph = simt.Graph()
    a = graph.add_kernel(scale_add, *cfg, (y, np.float32(2), x))
    b = graph.add_kernel(scale_add, *cfg, (z, np.float32(1), y), deps=[a])
    c = graph.add_kernel(scale_add, *cfg, (w, np.float32(3), y), deps=[a])
    graph.add_kernel(scale_add, *cfg, (x, np.float32(1), z), deps=[b, c])
    graph.instantiate().launch()
    simt.synchronize()
    return [v.copy_to_host() for v in (x, y, z, w)]


def graph_captured(x, y, z, w):
    """The same graph captured from two streams joined by events."""
    x, y, z, w = (simt.to_device(v) for v in (x, y, z, w))
    cfg = ((x.size + 255) // 256, 256)
    stream1, stream2 = simt.Stream(), simt.Stream()
    event1, event2 = simt.Event(timing=False), simt.Event(timing=False)
    with stream1.capture() as graph:                         # stream1 is the origin stream
        scale_add[cfg + (0, stream1)](y, np.float32(2), x)  # kernel_A
        event1.record(stream1)                              # fork into stream2
        stream2.wait_event(event1)
        scale_add[cfg + (0, stream1)](z, np.float32(1), y)  # kernel_B
        scale_add[cfg + (0, stream2)](w, np.float32(3), y)  # kernel_C
        event2.record(stream2)                              # join stream2 back
        stream1.wait_event(event2)
        scale_add[cfg + (0, stream1)](x, np.float32(1), z)  # kernel_D
    graph.instantiate().launch(stream1)
    stream1.synchronize()
    return [v.copy_to_host() for v in (x, y, z, w)]


# -- C.3.1, C.4: cooperative groups -----------------------------------------------------


@simt.device
def block_sum(g, x, n):
    """Tree sum of x[0:n] in shared memory; every thread of ``g`` must call it."""
    step = n // 2
    while step > 0:
        if g.thread_rank() < step:
            x[g.thread_rank()] += x[g.thread_rank() + step]
        g.sync()
        step //= 2
    return x[0]


@simt.kernel
def parallel_kernel(values, out):
    tb = cg.this_thread_block()
    x = simt.shared.array(256, np.int32)
    x[tb.thread_rank()] = values[blockIdx.x * 256 + tb.thread_rank()]
    tb.sync()
    total = block_sum(tb, x, 256)                # the whole block calls block_sum
    if tb.thread_rank() == 0:
        out[blockIdx.x] = total


def block_sums(values):
    """The sum of each 256 consecutive values, one thread block each."""
    out = simt.device_array(values.size // 256, np.int32)
    parallel_kernel[values.size // 256, 256](simt.to_device(values), out)
    return out.copy_to_host()


@simt.kernel
def tile_sums_kernel(values, out):
    tile32 = cg.tiled_partition(cg.this_thread_block(), 32)
    i = simt.grid(1)
    total = cg.reduce(tile32, values[i], cg.plus)
    if tile32.thread_rank() == 0:
        out[i // 32] = total


def tile_sums(values):
    """The sum of each 32 consecutive values, one warp-sized tile each."""
    out = simt.device_array(values.size // 32, np.int32)
    tile_sums_kernel[values.size // 128, 128](simt.to_device(values), out)
    return out.copy_to_host()


# -- C.7: grid synchronization in a cooperative launch -----------------------------------


@simt.kernel
def grid_total_kernel(values, partial, out):
    grid = cg.this_grid()
    block = cg.tiled_partition(cg.this_thread_block(), 128)   # the whole block, as a tile
    acc = np.int64(0)
    i = grid.thread_rank()
    while i < values.shape[0]:               # a grid-stride loop
        acc += values[i]
        i += grid.size()
    acc = cg.reduce(block, acc, cg.plus)
    if block.thread_rank() == 0:
        partial[blockIdx.x] = acc
    grid.sync()                              # every block's partial sum is written
    if grid.thread_rank() == 0:
        total = np.int64(0)
        for k in range(partial.shape[0]):
            total += partial[k]
        out[0] = total


def grid_total(values, blocks=4):
    """The sum of ``values`` by one cooperative launch of ``blocks`` blocks."""
    partial = simt.device_array(blocks, np.int64)
    out = simt.device_array(1, np.int64)
    grid_total_kernel.launch_cooperative(blocks, 128, (simt.to_device(values), partial, out))
    return int(out.copy_to_host()[0])
