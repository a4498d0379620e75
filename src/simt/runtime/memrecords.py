"""simt's records of the memory it made on host devices (device, managed, pinned, mapped)
and of host memory registered with it, by address: what ``simt.pointer_attributes``
answers from where no driver knows the address (runtime/pointers.py)."""
import threading
import weakref

_records = {}             # start address -> (weakref to the owner, nbytes, type, device)
_lock = threading.RLock()    # reentrant: a record's owner may die (and its callback run)
#                              while this thread holds the lock, in a collection


def record(owner, ptr, nbytes, kind, device):
    """Remember memory simt made or registered: ``owner`` keeps it alive; the record
    goes when the owner does."""
    def forget(ref, key=ptr):
        with _lock:
            if _records.get(key, (None,))[0] is ref:
                del _records[key]
    with _lock:
        _records[ptr] = (weakref.ref(owner, forget), nbytes, kind, device)


def forget(ptr):
    """Drop the record of memory that starts at ``ptr`` (host_unregister)."""
    with _lock:
        _records.pop(ptr, None)


def lookup(ptr):
    """(type, device) of the recorded memory holding ``ptr``, or None."""
    with _lock:
        entries = list(_records.items())
    for start, (ref, nbytes, kind, device) in entries:
        if start <= ptr < start + max(nbytes, 1) and ref() is not None:
            return kind, device
    return None
