"""The CUDA backend: NVIDIA GPUs through NVIDIA's driver bindings (cuda-bindings).

Modules: driver (checked calls, error mapping), device (CudaBackend), properties,
hostmem (pinned and mapped host memory), module (PTX loading, kernel handles,
libdevice), launch (the prepared-parameter launch path), streams (streams, events).
Nothing here imports cuda.bindings until a GPU is actually used. The runtime finds
CudaBackend by name (runtime/devices.py BACKENDS).
"""
