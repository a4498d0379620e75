"""The host devices' occupancy model (cpu, sim): a core is a multiprocessor holding what a
GPU's would by the limits in the device's properties; occupancy queries and the cpu
device's cooperative launches use it."""
from ..errors import InvalidConfiguration


def blocks_per_core(props, threads, shared_total):
    """The CPU device's occupancy model: a core is a multiprocessor holding what a GPU's
    would by the limits in its properties (max_threads_per_multiprocessor threads,
    max_blocks_per_multiprocessor blocks, shared_memory_per_multiprocessor bytes);
    registers do not limit it. 0 for a block that cannot run at all."""
    if not 1 <= threads <= props.max_threads_per_block or \
            shared_total > props.shared_memory_per_block_optin:
        return 0
    blocks = min(props.max_blocks_per_multiprocessor,
                 props.max_threads_per_multiprocessor // threads)
    if shared_total:
        blocks = min(blocks, props.shared_memory_per_multiprocessor // shared_total)
    return blocks


def potential_block_size(props, per_core, max_threads=0):
    """(min_grid, block) as cudaOccupancyMaxPotentialBlockSize chooses them: the block
    size (a multiple of the warp size, at most ``max_threads`` when given) with the most
    resident threads per multiprocessor, the largest on a tie, and enough blocks of it to
    fill every multiprocessor."""
    best, most = 0, 0
    largest = min(props.max_threads_per_block, max_threads or props.max_threads_per_block)
    for block in range(largest - largest % props.warp_size, 0, -props.warp_size):
        threads = per_core(block) * block
        if threads > most:
            best, most = block, threads
    if not best:
        raise InvalidConfiguration("max_potential_block_size: no block size can run this "
                                   "kernel (its shared memory is over the device's limit)")
    return per_core(best) * props.multiprocessor_count, best
