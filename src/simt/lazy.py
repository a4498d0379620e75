"""Modules loaded at their first use rather than at ``import simt``.

Kernels compile on first launch, so what only compiling needs (llvmlite's IR builder for
lowerings, the pipeline, the disk cache, the launch binder) need not be loaded, and on
machines without bytecode caches compiled from source, by a program that never launches.
"""
import importlib.util
import sys


def lazy_module(name):
    """The module ``name``, executed at its first attribute access. Lowerings live beside
    their entries but only run when a kernel compiles, so ``import simt`` need not load
    llvmlite for them."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
