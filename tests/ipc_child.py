"""The other process of tests/test_ipc.py (a multiprocessing spawn child): opens the
parent's array and event, waits for the event, reads the array and writes it back doubled."""
import numpy as np


def child(device, array_handle, event_handle, results):
    try:
        import simt
        with simt.use_device(device):
            event = simt.Event.from_ipc_handle(event_handle)
            array = simt.open_ipc_handle(array_handle)
            simt.default_stream().wait_event(event)      # the parent's kernel is done
            seen = array.copy_to_host()
            array.copy_from(seen * 2)
            simt.synchronize()
            results.put(("ok", seen))
    except BaseException as exc:                         # the parent reports it
        results.put(("error", f"{type(exc).__name__}: {exc}"))
