"""What the suites' own masters share (test_fmpy.py's Co-Simulation `Slave`, test_model_exchange.py's
Model Exchange `Exchange`): the callback struct that collects an instance's log lines, and the
factory behind their pytest fixtures."""

import shutil
from contextlib import contextmanager
from ctypes import byref
from pathlib import Path

import fmpy
from fmpy.fmi2 import (
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from fmpy.logging import addLoggerProxy

# Every callback struct given to FMPy's addLoggerProxy, kept for the life of the process: the
# proxy's native library keeps a pointer to the last logger it wrapped, and calls it from a
# later instance's log lines (a freed ctypes callback there is a segmentation fault).
PROXIED_CALLBACKS = []


def proxied(cb):
    """`cb` with FMPy's logger proxy (which formats the variadic message), kept alive."""
    addLoggerProxy(byref(cb))
    PROXIED_CALLBACKS.append(cb)
    return cb


def logging_callbacks(logs):
    """Callbacks that append each log line to `logs` as (status, category, message), with FMPy's
    calloc and free as the allocator."""

    def logger(env, instance, status, category, message):
        logs.append((status, (category or b"").decode(), (message or b"").decode()))

    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(logger)
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(fmpy.calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(fmpy.free)
    return proxied(cb)


@contextmanager
def instances(cls):
    """A factory `make(fmu_path, *args)` of `cls(fmu_path, unzipdir, *args)` instances (each .fmu
    extracted once; an extracted FMU, a directory, is used as it is); every instance is freed
    and every extracted directory removed at the end."""
    made, dirs = [], {}

    def make(fmu_path, *args):
        key = str(fmu_path)
        if Path(fmu_path).is_dir():
            unzipdir = key  # already an extracted FMU (a variant)
        else:
            if key not in dirs:
                dirs[key] = fmpy.extract(fmu_path)
            unzipdir = dirs[key]
        instance = cls(fmu_path, unzipdir, *args)
        made.append(instance)
        return instance

    try:
        yield make
    finally:
        for instance in made:
            instance.free()
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)
