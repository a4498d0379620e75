"""The command line: python -m simt info | examples | run NAME | cache info|clear."""

import argparse
import ast
import difflib
import glob
import importlib
import os
import pkgutil
import sys

from simt.config import config
from simt.runtime import devices
from simt.errors import CudaError


def _format_value(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return " x ".join(str(v) for v in value) if len(value) == 3 else ".".join(map(str, value))
    return "unknown" if value is None else str(value)


def info(out=sys.stdout):
    """Print every device and its properties (deviceQuery), then the settings."""
    found = devices.devices()
    print(f"simt found {len(found)} device(s); current: {devices.get_device().name}\n", file=out)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        print(f"CUDA_VISIBLE_DEVICES={visible!r}: simt numbers the GPUs it leaves visible as "
              "the driver does (cuda:0 is the first listed); pci_bus_id names the physical "
              "GPU\n", file=out)
    for device in found:
        print(f"Device {device.name!r}", file=out)
        try:
            properties = device.properties.as_dict()
        except CudaError as exc:
            print(f"  unavailable: {exc}\n", file=out)
            continue
        width = max(len(key) for key in properties)
        for key, value in properties.items():
            print(f"  {key:<{width}}  {_format_value(value)}", file=out)
        print(file=out)
    for kind in devices.BACKENDS:
        reason = devices.why_none(kind)
        if reason:
            print(f"No {kind} device listed: {reason}\n", file=out)
    print("Settings (environment variable = value: meaning)", file=out)
    for name, env, value, doc in config.describe():
        print(f"  {env} = {value!r}: {doc}", file=out)


def find_examples(failed=None):
    """{NAME: example} for every module of simt.examples with NAME, DESCRIPTION and main(),
    and every entry of a module's EXAMPLES list (objects with the same three attributes).
    A module that fails to import is reported on stderr and, when ``failed`` is a dict,
    each name its source declares is entered there with the module and the exception."""
    import simt.examples as package
    found = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        qualified = f"simt.examples.{module_info.name}"
        try:
            module = importlib.import_module(qualified)
        except Exception as exc:   # a broken example must not hide the others
            if failed is None:
                print(f"simt: example module {module_info.name!r} failed to import: {exc}",
                      file=sys.stderr)
            else:
                for name in _declared_names(module_info, qualified):
                    failed[name] = (qualified, exc)
            continue
        if all(hasattr(module, attr) for attr in ("NAME", "DESCRIPTION", "main")):
            found[module.NAME] = module
        for example in getattr(module, "EXAMPLES", ()):   # modules holding several programs
            found[example.NAME] = example
    return found


def _declared_names(module_info, qualified):
    """The example names a module's source declares (``NAME = "..."`` at module level and
    ``Example("...", ...)``), read without importing it; the module's own name too."""
    names = [module_info.name]
    try:
        spec = module_info.module_finder.find_spec(qualified)   # the file, not the import
        with open(spec.origin, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (AttributeError, ImportError, OSError, SyntaxError, ValueError, TypeError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node in tree.body and \
                any(isinstance(t, ast.Name) and t.id == "NAME" for t in node.targets):
            value = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "Example" and node.args:
            value = node.args[0]
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            names.append(value.value)
    return names


def list_examples(out=sys.stdout):
    """Print one line per example, in the book's order: its name and description."""
    examples = find_examples()
    if not examples:
        print("no examples installed", file=out)
    from simt.examples._common import book_order
    width = max((len(name) for name in examples), default=0)
    ordered = sorted(examples.items(), key=lambda item: book_order(getattr(item[1], "SECTION", "")))
    for name, module in ordered:
        print(f"{name:<{width}}  {module.DESCRIPTION}", file=out)


def _unknown_example(name, examples, failed):
    """Exit status 1 naming the import error when ``name`` belongs to an example module
    that failed to import (the cause, not "no example"); else 2 with the closest names."""
    if name in failed:
        module, exc = failed[name]
        missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        hint = f" (the module {missing!r} is not installed)" if missing else ""
        print(f"simt: example {name!r} cannot run: its module {module} failed to import: "
              f"{type(exc).__name__}: {exc}{hint}", file=sys.stderr)
        return 1
    close = suggestions(name, [*examples, *failed])
    hint = f"did you mean {_either(close)}? " if close else ""
    print(f"simt: no example {name!r}; {hint}`python -m simt examples` lists them all",
          file=sys.stderr)
    return 2


def suggestions(name, names, most=4):
    """The names to offer for the unknown ``name``, case ignored: those it begins or is a
    ``_`` part of (``ray``: ray_const, ray_noconst), then difflib's closest (``julai``)."""
    key = name.lower()
    parts = sorted(n for n in names if n.lower().startswith(key) or key in n.lower().split("_"))
    lowered = {n.lower(): n for n in names}
    close = [lowered[n] for n in difflib.get_close_matches(key, lowered, n=most)]
    return list(dict.fromkeys(parts + close))[:most]


def _either(names):
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def example_help(name, out=sys.stdout):
    """Print what example ``name`` does and how to run it."""
    failed = {}
    examples = find_examples(failed)
    if name not in examples:
        return _unknown_example(name, examples, failed)
    example = examples[name]
    print(f"python -m simt run {name} [--device cpu|cuda:N] [--out DIR]\n", file=out)
    print(example.DESCRIPTION, file=out)
    print("\n--device  the device to run on (default: SIMT_DEVICE, else the first GPU, else cpu)"
          "\n--out     the folder for the pictures it writes (default: ./simt-out)", file=out)
    return 0


def run_example(name, device=None, out_dir=None):
    """Run example ``name`` on ``device``; return the exit status."""
    failed = {}
    examples = find_examples(failed)
    if name not in examples:
        return _unknown_example(name, examples, failed)
    if device is not None:
        devices.set_device(device)
    print(f"running {name} on {devices.get_device().name}", file=sys.stderr)
    examples[name].main(device=device, out_dir=out_dir)
    return 0


def cache_info(out=sys.stdout):
    """Print where the disk cache is, how many kernels it holds and their size."""
    entries = glob.glob(os.path.join(config.cache_dir, "*.simtc"))
    size = sum(os.path.getsize(path) for path in entries)
    state = "on" if config.cache else "off (SIMT_CACHE=0)"
    print(f"cache: {config.cache_dir} ({state})\n{len(entries)} compiled kernels, "
          f"{size / 2**20:.1f} MiB", file=out)


def cache_clear(out=sys.stdout):
    """Delete every compiled kernel from the disk cache (and nothing else in its folder)."""
    entries = glob.glob(os.path.join(config.cache_dir, "*.simtc"))
    for path in entries:
        os.remove(path)
    print(f"removed {len(entries)} compiled kernels from {config.cache_dir}", file=out)


COMMANDS = ("info", "examples", "run", "cache")


def _parser():
    from simt.version import __version__
    parser = argparse.ArgumentParser(prog="python -m simt",
                                     description="simt: the CUDA programming model in Python.")
    parser.add_argument("--version", action="version", version=f"simt {__version__}")
    commands = parser.add_subparsers(dest="command")     # none: main prints the help
    commands.add_parser("info", help="list the devices, their properties and the settings")
    commands.add_parser("examples", help="list the runnable examples")
    run = commands.add_parser("run", help="run one example (run NAME --help says what it does)",
                              add_help=False)
    run.add_argument("name", nargs="?")
    run.add_argument("--device", help="cpu or cuda:N (default: SIMT_DEVICE, else the first GPU, else cpu)")
    run.add_argument("--out", help="directory for the example's output files (default: ./simt-out)")
    run.add_argument("-h", "--help", action="store_true", help="say what example NAME does")
    cache = commands.add_parser("cache", help="the disk cache of compiled kernels")
    cache.add_argument("action", choices=("info", "clear"))
    return parser


def _an_example_for_a_command(argv):
    """Whether ``argv`` starts with an example's name where the command goes (``python -m
    simt julia``); argparse would answer only that 'julia' is not a command."""
    first = argv[0] if argv else "-"
    return not first.startswith("-") and first not in COMMANDS and first in find_examples({})


def main(argv=None):
    """Entry point; returns the exit status (0 ok, 1 simt error, 2 usage error)."""
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if _an_example_for_a_command(argv):
        print(f"simt: {argv[0]!r} is an example, not a command: python -m simt run "
              f"{argv[0]}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command is None:         # argparse's own error named only "command"
        parser.print_help(sys.stderr)
        return 2
    if args.command == "run" and args.name is None:
        print("usage: python -m simt run NAME [--device D] [--out DIR] [--help]\n"
              "`python -m simt examples` lists the names", file=sys.stdout if args.help else sys.stderr)
        return 0 if args.help else 2
    try:
        if args.command == "info":
            info()
        elif args.command == "examples":
            list_examples()
        elif args.command == "cache":
            (cache_info if args.action == "info" else cache_clear)()
        elif args.help:
            return example_help(args.name)
        else:
            return run_example(args.name, args.device, args.out)
    except BrokenPipeError:        # `python -m simt examples | head`: the reader left
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())      # no second error when Python flushes stdout
        return 0
    except CudaError as exc:
        if config.debug:
            raise
        print(f"simt: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:   # bad device names and settings
        if config.debug:
            raise
        print(f"simt: {exc}", file=sys.stderr)
        return 2
    return 0
