"""The lowering of ``child[grid, block](args)`` inside a kernel (lang/launches.py): its
operands evaluated in order, then the target's ``device_launch`` hook (the device
runtime on the GPU, backends/cuda/devlaunch.py; a queue on the CPU,
backends/cpu/devlaunch.py)."""
from ..lang.launches import device_launch


@device_launch.lowering()
def _device_launch(em, e):
    operands = [em.expr(a) for a in e.args]
    grid, block, shared, values = operands[0:3], operands[3:6], operands[6], operands[7:]
    em.target.device_launch(em, e, grid, block, shared, values)
