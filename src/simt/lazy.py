"""Modules loaded at their first use rather than at ``import simt``.

Kernels compile on first launch, so what only compiling needs (llvmlite's IR builder for
lowerings, the pipeline, the disk cache, the launch binder) need not be loaded, and on
machines without bytecode caches compiled from source, by a program that never launches.
"""
import importlib
import sys
import types


class _Lazy(types.ModuleType):
    """Stands for a module not imported yet; its first attribute access imports it.

    The import goes through the import system, whose lock on the module makes every thread
    that races for it wait until it has executed (importlib's LazyLoader, before Python
    3.12, let the others see it half executed)."""

    def __init__(self, name):
        super().__init__(name)
        self._simt_module = None

    def __getattr__(self, attr):
        module = self._simt_module
        if module is None:
            module = self._simt_module = importlib.import_module(self.__name__)
        return getattr(module, attr)


def lazy_module(name):
    """The module ``name``, executed at its first attribute access. Lowerings live beside
    their entries but only run when a kernel compiles, so ``import simt`` need not load
    llvmlite for them."""
    return sys.modules.get(name) or _Lazy(name)
