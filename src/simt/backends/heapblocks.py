"""The device heap's allocator (guide B.30), shared by the cpu and sim devices: first-fit
blocks of a heap of ``size`` bytes, each ``ALIGN``-byte aligned, coalesced when freed, so
that a heap that is full (or too fragmented) has no block to give, as CUDA's malloc
returns null. It hands out offsets; each device keeps the bytes."""
import bisect

ALIGN = 16


class Blocks:
    """``free_list``: sorted [(offset, size)] of free ranges; ``used``: offset -> size of
    each live block."""

    def __init__(self, size):
        self.free_list = [(0, size)]
        self.used = {}

    def take(self, nbytes):
        """The offset of a new block of at least ``nbytes`` bytes, or None."""
        if nbytes <= 0:
            return None
        size = -(-nbytes // ALIGN) * ALIGN
        for k, (offset, room) in enumerate(self.free_list):
            if room >= size:
                if room == size:
                    del self.free_list[k]
                else:
                    self.free_list[k] = (offset + size, room - size)
                self.used[offset] = size
                return offset
        return None

    def give(self, offset):
        """Free the block at ``offset``: its size, or None when no live block starts there."""
        size = self.used.pop(offset, None)
        if size is not None:
            self._release(offset, size)
        return size

    def _release(self, offset, size):
        k = bisect.bisect(self.free_list, (offset, size))
        if k < len(self.free_list) and self.free_list[k][0] == offset + size:
            size += self.free_list.pop(k)[1]
        if k > 0 and sum(self.free_list[k - 1]) == offset:
            offset, size = self.free_list[k - 1][0], self.free_list[k - 1][1] + size
            k -= 1
            del self.free_list[k]
        self.free_list.insert(k, (offset, size))

    def bytes_in_use(self):
        return sum(self.used.values())
