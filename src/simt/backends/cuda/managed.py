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
