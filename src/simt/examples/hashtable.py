"""CUDA by Example, appendix A.2: a chained hash table of 100 MiB of random keys built
on the CPU (A.2.2) and on the GPU with one lock per bucket (A.2.4).

The book's Entry structs and pointers become index arrays: entry ``i`` of the pool has
``pool_key[i]``, ``pool_value[i]`` and ``pool_next[i]`` (-1 for NULL), and
``entries[bucket]`` is the index of a bucket's first entry. Indices need none of the
pointer rebasing of the book's copy_table_to_host.

Bugs of the printed listings fixed here: verify_table hashed an entry's value instead
of its key (every check reported a misplaced entry); and the GPU version allocated
SIZE bytes for ELEMENTS pointer-sized values, half of what 64-bit pointers need.
"""
import time

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from ._common import Example
from .book import EventTimer, big_random_block_uint32
from .lock import Lock, lock, unlock

SIZE = 100 * 1024 * 1024
ELEMENTS = SIZE // 4            # SIZE / sizeof(unsigned int)
HASH_ENTRIES = 1024


@simt.device
def hash(key, count):           # noqa: A001 - the book's name
    return key % count


class Table:
    """count buckets over a pool of elements; arrays on the device (or the host)."""

    def __init__(self, entries, elements, alloc=simt.device_array):
        self.count = entries
        self.entries = alloc(entries, np.int32)
        self.entries[:] = -1                               # cudaMemset(entries, 0): all NULL
        self.pool_key = alloc(elements, np.uint32)
        self.pool_value = alloc(elements, np.uint64)       # void*: 8 bytes each
        self.pool_next = alloc(elements, np.int32)


@simt.kernel
def add_to_table(keys, values, entries, pool_key, pool_value, pool_next, mutex):
    tid = threadIdx.x + blockIdx.x * blockDim.x
    stride = blockDim.x * gridDim.x
    while tid < keys.shape[0]:
        key = keys[tid]
        hash_value = hash(key, np.uint32(entries.shape[0]))
        # one lane of the warp at a time: lanes spinning on a lock their own warp holds
        # hang GPUs without independent thread scheduling (before Volta)
        for i in range(32):
            if tid % 32 == i:
                pool_key[tid] = key                         # location = &table.pool[tid]
                pool_value[tid] = values[tid]
                lock(mutex, hash_value)
                pool_next[tid] = entries[hash_value]
                entries[hash_value] = tid
                unlock(mutex, hash_value)
        tid += stride


def add_to_table_cpu(keys, values, table):
    """A.2.2's insertions at the head of each bucket's list, in key order, vectorized:
    each entry's next is the previous key of its bucket, and a bucket's head is its last."""
    buckets = (keys % np.uint32(table.count)).astype(np.int64)
    order = np.argsort(buckets, kind="stable")
    same = np.zeros(order.size, bool)
    same[1:] = buckets[order[1:]] == buckets[order[:-1]]
    table.pool_key[:] = keys
    table.pool_value[:] = values
    table.pool_next[order] = np.where(same, np.roll(order, 1), -1)
    last = np.ones(order.size, bool)
    last[:-1] = ~same[1:]
    table.entries[buckets[order[last]]] = order[last]


def copy_table_to_host(table):
    """(entries, keys, next) as host arrays."""
    return tuple(np.asarray(a) if isinstance(a, np.ndarray) else a.copy_to_host()
                 for a in (table.entries, table.pool_key, table.pool_next))


def verify_table(table, elements):
    """Walk every bucket's list (all buckets a step at a time); returns the count found."""
    entries, keys, nexts = copy_table_to_host(table)
    current = entries.astype(np.int64)
    bucket = np.arange(table.count)
    count = 0
    while True:
        live = current >= 0
        if not live.any():
            break
        count += int(live.sum())
        here, where = current[live], bucket[live]
        wrong = keys[here] % np.uint32(table.count) != where       # the book hashed the value
        for key, at in zip(keys[here][wrong][:10], where[wrong][:10]):
            print(f"{key} hashed to {key % table.count}, but was located at {at}")
        current[live] = nexts[here]
    if count != elements:
        print(f"{count} elements found in hash table.  Should be {elements}")
    else:
        print(f"All {count} elements found in hash table.")
    return count


def _inputs(elements):
    keys = big_random_block_uint32(elements)
    values = np.arange(elements, dtype=np.uint64)       # the book leaves the values to the user
    return keys, values


def hashtable_cpu(device=None, out_dir=None, elements=ELEMENTS):
    keys, values = _inputs(elements)
    table = Table(HASH_ENTRIES, elements, alloc=np.empty)
    started = time.perf_counter()
    add_to_table_cpu(keys, values, table)
    print(f"Time to hash:  {(time.perf_counter() - started) * 1e3:3.1f} ms")
    verify_table(table, elements)
    return table


def build_on_device(keys, dev_values):
    table = Table(HASH_ENTRIES, keys.size)
    locks = Lock(HASH_ENTRIES, spread=True)
    add_to_table[60, 256](simt.to_device(keys), dev_values, table.entries,
                          table.pool_key, table.pool_value, table.pool_next, locks.mutex)
    simt.synchronize()
    return table


def hashtable_gpu(device=None, out_dir=None, elements=ELEMENTS):
    keys, values = _inputs(elements)
    build_on_device(keys[:256], simt.to_device(values[:256]))   # compile outside the timing
    # the book never fills its values ("filled in by user of this code example"): they are
    # copied before its timed region starts, so that the table holds them
    dev_values = simt.to_device(values)
    timer = EventTimer()
    table = build_on_device(keys, dev_values)
    print(f"Time to hash:  {timer.elapsed_ms():3.1f} ms")
    verify_table(table, elements)
    return table


EXAMPLES = [
    Example("hashtable_cpu", "A.2.2", "hash table of 100 MiB of random keys on the host (A.2.2)",
            hashtable_cpu),
    Example("hashtable_gpu", "A.2.4", "the hash table built by the GPU, a lock per bucket, timed "
            "(A.2.4)", hashtable_gpu),
]
