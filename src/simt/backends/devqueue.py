"""What the host devices (cpu, sim) share of CUDA 12's device runtime, for launches from
kernels (dynamic parallelism, guide appendix D): the checks a launch passes before it is
queued, the count of launches pending, and the order a finished grid's launches run in.

Both devices queue a grid's launches and run them once the grid has finished, each
followed by its own launches (backends/cpu/devlaunch.py, backends/sim/devlaunch.py).
``in_order`` puts a grid's tail launches last: that is all the named streams ask of a
device that never runs a child alongside its parent (lang/launches.py).
"""
import threading

INVALID_VALUE = 1                 # cudaErrorInvalidValue
INVALID_CONFIGURATION = 9         # cudaErrorInvalidConfiguration
PENDING_COUNT_EXCEEDED = 69       # cudaErrorLaunchPendingCountExceeded
PENDING_LIMIT = 2048              # cudaLimitDevRuntimePendingLaunchCount's default
TAIL_LAUNCH = 0x3                 # cudaStreamTailLaunch, as lang/launches.py names it


class Family:
    """What the launches of one host launch share: the loaded kernels by family index
    (compiler/family.py), the device's limits a launch is checked against, and the count
    of launches made and not yet finished, which the device runtime bounds."""

    def __init__(self, kernels, limit, properties):
        self.kernels, self.limit, self.properties = kernels, limit, properties
        self.outstanding = 0
        self.lock = threading.Lock()

    def check(self, grid, block, shared):
        """0 when the device runtime takes this launch, which then counts as pending;
        else its cudaError."""
        if not self.fits(grid, block, shared):
            return INVALID_CONFIGURATION
        return 0 if self.add() else PENDING_COUNT_EXCEEDED

    def add(self):
        """Count one more launch; False when that would pass the limit."""
        with self.lock:
            if self.outstanding >= self.limit:
                return False
            self.outstanding += 1
            return True

    def finished(self):
        with self.lock:
            self.outstanding -= 1

    def fits(self, grid, block, shared):
        """Whether a launch's shape is one the device takes."""
        p = self.properties
        return all(grid) and all(block) and \
            block[0] * block[1] * block[2] <= p.max_threads_per_block and \
            all(b <= m for b, m in zip(block, p.max_block_dim)) and \
            all(g <= m for g, m in zip(grid, p.max_grid_dim)) and \
            shared <= p.shared_memory_per_block_optin


def in_order(pending, stream_of):
    """The launches of one finished grid in the order they run: the others in launch
    order (the order of each block's stream, and an order fire-and-forget launches may
    take), then the tail launches in theirs: a tail launch waits for everything else its
    grid launched, and for the tail launches before it."""
    return [p for p in pending if stream_of(p) != TAIL_LAUNCH] + \
        [p for p in pending if stream_of(p) == TAIL_LAUNCH]
