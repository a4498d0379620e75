"""The GPU half of runtime/control.py: kernel attributes (cuFuncSetAttribute), the cache
preference (cuCtxSetCacheConfig), L2 access-policy windows of streams (cuStreamSetAttribute)
and device reset (cuDevicePrimaryCtxReset)."""
from . import driver
from .driver import api, call

_FUNCTION_ATTRIBUTES = {
    "max_dynamic_shared_size": "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
    "preferred_shared_carveout": "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT",
}
_CACHE_CONFIGS = {"prefer_none": "CU_FUNC_CACHE_PREFER_NONE",
                  "prefer_shared": "CU_FUNC_CACHE_PREFER_SHARED",
                  "prefer_l1": "CU_FUNC_CACHE_PREFER_L1",
                  "prefer_equal": "CU_FUNC_CACHE_PREFER_EQUAL"}
_ACCESS = {"normal": "CU_ACCESS_PROPERTY_NORMAL", "streaming": "CU_ACCESS_PROPERTY_STREAMING",
           "persisting": "CU_ACCESS_PROPERTY_PERSISTING"}


def set_function_attribute(backend, loaded, name, value):
    """cuFuncSetAttribute on a loaded kernel; max_dynamic_shared_size also tells the
    kernel's opt-in (module.ensure_dynamic_shared) what is set."""
    backend.make_current()
    d = api()
    function = loaded.function
    attr = getattr(d.CUfunction_attribute, _FUNCTION_ATTRIBUTES[name])
    call(d.cuFuncSetAttribute, function.handle, attr, value)
    if name == "max_dynamic_shared_size":
        function._shared_optin = value


def set_cache_config(backend, config):
    backend.make_current()
    d = api()
    call(d.cuCtxSetCacheConfig, getattr(d.CUfunc_cache, _CACHE_CONFIGS[config]))


def get_cache_config(backend):
    backend.make_current()
    d = api()
    found = call(d.cuCtxGetCacheConfig)
    names = {int(getattr(d.CUfunc_cache, value)): key for key, value in _CACHE_CONFIGS.items()}
    return names.get(int(found), "prefer_none")


def set_access_policy(backend, stream, policy):
    """cuStreamSetAttribute(ACCESS_POLICY_WINDOW); 0 bytes removes the window."""
    backend.make_current()
    d = api()
    window = d.CUaccessPolicyWindow()
    window.base_ptr = policy.ptr
    window.num_bytes = policy.nbytes
    window.hitRatio = policy.hit_ratio
    window.hitProp = getattr(d.CUaccessProperty, _ACCESS[policy.hit])
    window.missProp = getattr(d.CUaccessProperty, _ACCESS[policy.miss])
    value = d.CUstreamAttrValue()
    value.accessPolicyWindow = window
    attr = d.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
    call(d.cuStreamSetAttribute, 0 if stream is None else stream, attr, value)


def reset(backend):
    """cudaDeviceReset: every allocation of the primary context goes with it
    (cuDevicePrimaryCtxReset), so simt's records of them are dropped first and the
    Allocations of before are made stale (their frees skipped: a new allocation may have
    the same address). The context stays retained by simt (a reset does not release it)
    and is made current again; the error record, the scratch pool and the default stream
    are made again when next needed."""
    d = api()
    driver.forget_dead(backend.index)      # a reset is what may follow a sticky error
    backend.set_current()
    backend.free_deferred()
    with backend.held_lock:
        backend.held.clear()
        backend.deferred = []
    backend.generation = getattr(backend, "generation", 0) + 1
    backend.registered.clear()
    for name in ("_scratch_pool", "_default_stream", "_error_record"):
        vars(backend).pop(name, None)
    backend.error_source = None
    driver.recorded_errors.pop(backend.index, None)
    call(d.cuDevicePrimaryCtxReset, backend.device)
    backend.context = call(d.cuDevicePrimaryCtxRetain, backend.device)
    call(d.cuDevicePrimaryCtxRelease, backend.device)     # the count simt held before
    backend.set_current(force=True)
