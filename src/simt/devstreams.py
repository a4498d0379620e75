"""The named streams of CUDA 12's device runtime (cuda_device_runtime_api.h), which a
launch inside a kernel names as the fourth item of its brackets (lang/launches.py); the
host refuses them, as CUDA's host runtime does (runtime/streams.py)."""
from .errors import InvalidConfiguration


class DeviceStream:
    """A named stream of CUDA 12's device runtime: a launch inside a kernel names it as
    the fourth item of its brackets, ``child[grid, block, shared_bytes, stream](args)``
    (docs/dynamic-parallelism.md). It names no stream on the host."""

    def __init__(self, name, cuda_name, value):
        # the cudaStream_t value: 'value', not 'handle', which names a host stream's
        self.name, self.cuda_name, self.value = name, cuda_name, value

    def __repr__(self):
        return f"simt.{self.name}"


# the values are cuda_device_runtime_api.h's (CUDA 12 and 13)
stream_fire_and_forget = DeviceStream("stream_fire_and_forget", "cudaStreamFireAndForget", 0x4)
"""The fire-and-forget stream (cudaStreamFireAndForget), for launches inside kernels: the
child may start at once and is ordered with nothing else its parent launches; it finishes
before the parent's tail launches start, and before the host launch does."""

stream_tail_launch = DeviceStream("stream_tail_launch", "cudaStreamTailLaunch", 0x3)
"""The tail launch stream (cudaStreamTailLaunch), for launches inside kernels: the child
starts once its parent's grid and all the parent's other launches (block streams,
fire-and-forget) have finished, with their descendants; the tail launches of a grid run in
the order they were made, each after the one before and its descendants."""


def refuse_on_host(stream, what):
    """The InvalidConfiguration for a device runtime stream given to host work."""
    if isinstance(stream, DeviceStream):
        raise InvalidConfiguration(
            f"{what}: {stream!r} ({stream.cuda_name}) is a stream of the device runtime: "
            "it names a stream only for a launch inside a kernel, "
            f"child[grid, block, shared_bytes, {stream!r}](args); on the host use a "
            "simt.Stream, or None for the default stream")
