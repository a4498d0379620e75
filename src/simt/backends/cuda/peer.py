"""Several GPUs on the driver: peer access between primary contexts, and copies from one
GPU's memory to another's without the host (cuMemcpyPeer)."""
from .driver import api, call, check, error_name


def can_access_peer(backend, other):
    return bool(call(api().cuDeviceCanAccessPeer, backend.device, other.device))


def enable_peer_access(backend, other):
    """cuCtxEnablePeerAccess from ``backend``'s context into ``other``'s; enabling it a
    second time (another library may have) is not an error."""
    backend.make_current()
    (err,) = api().cuCtxEnablePeerAccess(other.context, 0)
    if err and error_name(err) != "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED":
        check(err, f"cuCtxEnablePeerAccess(cuda:{backend.index} -> cuda:{other.index})")


def copy_peer(backend, dst_ptr, dst_backend, src_ptr, nbytes, stream=None):
    """``nbytes`` from ``backend``'s ``src_ptr`` to ``dst_backend``'s ``dst_ptr``: over
    NVLink or PCIe where the GPUs are peers, staged by the driver where not."""
    backend.make_current()
    driver = api()
    if stream is None:
        call(driver.cuMemcpyPeer, dst_ptr, dst_backend.context, src_ptr, backend.context,
             nbytes)
    else:
        call(driver.cuMemcpyPeerAsync, dst_ptr, dst_backend.context, src_ptr,
             backend.context, nbytes, stream)
