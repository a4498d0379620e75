"""GPU timing shared by the simt and CuPy measurements: before each timed run a
spin kernel holds the GPU for about 100 us, so that the start event and the launch
are queued before the GPU reaches them and the host's launch latency is not counted
(bench/cuda/harness.h does the same for the CUDA C twins); all runs are queued, then
one synchronization; per-run times come from event pairs on the legacy default stream."""
import numpy as np

import simt

SPIN_CYCLES = 200000


@simt.kernel
def spin(cycles):
    t0 = simt.clock64()
    while simt.clock64() - t0 < cycles:
        simt.nanosleep(32)


def event_times(launch, reps):
    """Kernel time in ms of each of ``reps`` runs of ``launch()``, after one warm-up."""
    backend = simt.get_device().backend
    launch()
    backend.synchronize()
    events = [(backend.create_event(), backend.create_event()) for _ in range(reps)]
    for start, stop in events:
        spin[1, 1](np.int64(SPIN_CYCLES))
        start.record()
        launch()
        stop.record()
    backend.synchronize()
    return [start.elapsed_time(stop) for start, stop in events]
