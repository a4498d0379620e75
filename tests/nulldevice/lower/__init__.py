"""The null device's target in the registry: declared, and every entry refused with a reason
(a device that compiles kernels registers its lowerings here instead)."""
from simt.lang.registry import REGISTRY, declare_target, refuse

TARGET = declare_target("null", llvm=False)
refuse(*REGISTRY.values(), target=TARGET, why="the null device runs no kernels")
