"""The public API carries type hints (py.typed is shipped): the main entry points say
what they take and return, and the hints resolve."""
import typing

import simt


def test_entry_points_have_resolvable_hints():
    for fn in (simt.to_device, simt.device_array, simt.zeros, simt.asarray, simt.from_dlpack,
               simt.get_device, simt.set_device, simt.devices, simt.synchronize):
        hints = typing.get_type_hints(fn)
        assert "return" in hints, fn.__name__
    assert typing.get_type_hints(simt.to_device)["return"] is simt.DeviceArray


def test_the_package_says_it_is_typed():
    import importlib.resources
    assert importlib.resources.files("simt").joinpath("py.typed").is_file()
