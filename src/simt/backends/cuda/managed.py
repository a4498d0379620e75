"""Unified memory hints on the driver: cuMemPrefetchAsync and cuMemAdvise, which CUDA 13
takes with a CUmemLocation (cuda-bindings 12 names that form ``_v2``)."""
from .driver import api, call

_ADVICE = {"read_mostly": "READ_MOSTLY", "preferred_location": "PREFERRED_LOCATION",
           "accessed_by": "ACCESSED_BY"}


def _location(driver, target):
    """The CUmemLocation of a CudaBackend, or of the host for None."""
    location = driver.CUmemLocation()
    kinds = driver.CUmemLocationType
    if target is None:
        location.type = kinds.CU_MEM_LOCATION_TYPE_HOST
        location.id = 0
    else:
        location.type = kinds.CU_MEM_LOCATION_TYPE_DEVICE
        location.id = target.index
    return location


def _entry(driver, name):
    """The location-taking form: ``name``_v2 in cuda-bindings 12, ``name`` in 13."""
    return getattr(driver, name + "_v2", None) or getattr(driver, name)


def prefetch(backend, ptr, nbytes, target, stream=None):
    backend.make_current()
    driver = api()
    call(_entry(driver, "cuMemPrefetchAsync"), ptr, nbytes, _location(driver, target), 0,
         stream or 0)


def advise(backend, ptr, nbytes, advice, target, unset=False):
    backend.make_current()
    driver = api()
    value = getattr(driver.CUmem_advise,
                    f"CU_MEM_ADVISE_{'UNSET' if unset else 'SET'}_{_ADVICE[advice]}")
    call(_entry(driver, "cuMemAdvise"), ptr, nbytes, value, _location(driver, target))


_ATTACH = {"global": "CU_MEM_ATTACH_GLOBAL", "host": "CU_MEM_ATTACH_HOST",
           "single": "CU_MEM_ATTACH_SINGLE"}


def attach_mem(backend, stream, ptr, nbytes, flags):
    """cuStreamAttachMemAsync of a whole managed allocation (CUDA takes length 0 for it)."""
    backend.make_current()
    driver = api()
    call(driver.cuStreamAttachMemAsync, stream or 0, ptr, 0,
         getattr(driver.CUmemAttach_flags, _ATTACH[flags]))


_MEMORY_TYPES = {1: "host", 2: "device", 3: "array", 4: "unified"}    # CU_MEMORYTYPE_*


def pointer_attributes(backend, ptr):
    """cuPointerGetAttributes: memory type, ordinal, device and host pointers of ``ptr``.
    An address the driver does not know (pageable host memory) is 'unregistered', as
    cudaPointerGetAttributes reports it."""
    backend.make_current()
    driver = api()
    names = ("MEMORY_TYPE", "IS_MANAGED", "DEVICE_ORDINAL", "DEVICE_POINTER", "HOST_POINTER")
    kinds = [getattr(driver.CUpointer_attribute, f"CU_POINTER_ATTRIBUTE_{n}") for n in names]
    values = call(driver.cuPointerGetAttributes, len(kinds), kinds, ptr)
    memory_type, managed, ordinal, device_ptr, host_ptr = (_int(v) for v in values)
    if managed:
        kind = "managed"
    else:
        kind = _MEMORY_TYPES.get(memory_type, "unregistered")
    known = kind != "unregistered" and 0 <= ordinal < 2**31
    return {"memory_type": kind, "device": backend.device_name(ordinal) if known else None,
            "device_pointer": device_ptr or None, "host_pointer": host_ptr or None}


def _int(value):
    """A value cuPointerGetAttributes returned (an int, a CUdeviceptr, a bool...) as an
    int; 0 for None."""
    if value is None:
        return 0
    try:
        return int(value)
    except TypeError:
        return int(getattr(value, "getPtr", lambda: 0)())
