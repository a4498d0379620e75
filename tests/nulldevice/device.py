"""The null device's Backend: nothing but properties; every other hook comes from the
contract and raises NotSupportedError naming the feature and the device."""
from simt.runtime.backend import Backend, DeviceProperties



class NullBackend(Backend):
    kind = "null"

    def properties(self):
        return DeviceProperties(name="null", kind="null")
