# Heap high-water of library operations under the unix port.
# MIT license
#
# MicroPython has no allocation hook, so the meter samples the live heap (gc.mem_alloc()
# after gc.collect()) at many points; `peak - base` is the heap held above idle at the worst
# sample. A sample collects only when the uncollected figure (live + garbage, an upper bound)
# exceeds the peak so far, which gives the same peak as collecting every time, much faster.
#
# Where it samples: in every module it watches (by default every loaded `claw_memory` module,
# subpackages included) it wraps every module-level function and every method of the
# module's classes, sampling on entry and on exit of each call, and it wraps `open` and
# `json.load`/`json.loads` there too. So it sees the live heap at every call boundary inside
# the library (each fsutil call, each record parse, each file open).
#
# Modules of the package imported while the meter runs (the package imports much lazily:
# installed as .mpy, a module's bytecode lives in the heap) are watched from then on: the
# meter hooks `__import__` (where the port lets builtins be overridden, as the unix port
# does), and the heap its own wrappers take is left out of the figures.
#
# What it can miss: memory allocated and freed again inside one function body between two
# calls (a temporary string built and dropped in a loop), memory held only inside a C
# builtin while it runs (json.loads holds its input and the growing result; the sample after
# it sees only the result), and fragmentation: a heap with enough free bytes in total can
# still fail an allocation that needs one long run. The smallest heap an operation succeeds
# in (tools/bench.py searches it) catches the last two.

import gc
import sys

_FUNC = type(lambda: 0)


def _gen():
    yield


_GEN = type(_gen)


class _Json:
    def __init__(self, meter, real):
        self._m = meter
        self._real = real

    def loads(self, s):
        self._m.sample()
        v = self._real.loads(s)
        self._m.sample()
        return v

    def load(self, f):
        self._m.sample()
        v = self._real.load(f)
        self._m.sample()
        return v

    def dumps(self, *a, **k):
        return self._real.dumps(*a, **k)


def library_modules(prefix="claw_memory"):
    """Every loaded module of the package (subpackages included)."""
    return [m for name, m in sorted(sys.modules.items())
            if name == prefix or name.startswith(prefix + ".")]


class Meter:
    def __init__(self, *modules, deep=True, stride=1):
        self.auto = not modules  # every module of the package, also those imported later
        self.modules = modules or tuple(library_modules())
        self.deep = deep
        # stride > 1: wrapped calls sample only every stride-th time (for long repetitive
        # operations: gc.mem_alloc() itself walks the whole heap); open/json always sample.
        self.stride = stride
        self.calls = 0
        self.base = self.peak = 0
        self.samples = 0
        self.collections = 0
        self.prefix = "claw_memory"
        self.extra = 0  # heap the wrappers of modules imported while metering take

    def sample(self):
        # gc.mem_alloc() without a collection counts live data plus garbage, so it is an
        # upper bound of the live heap: only when it exceeds the peak so far can this sample
        # be a new peak, and only then is a collection (the expensive part) needed.
        self.samples += 1
        a = gc.mem_alloc() - self.extra
        if a > self.peak:
            gc.collect()
            self.collections += 1
            a = gc.mem_alloc() - self.extra
            if a > self.peak:
                self.peak = a

    def _open(self, *a, **k):
        self.sample()
        return open(*a, **k)

    def _wrap(self, fn):
        meter = self

        def wrapped(*a, **k):
            meter.calls += 1
            if meter.calls % meter.stride == 0:
                meter.sample()
            try:
                return fn(*a, **k)
            finally:
                if meter.calls % meter.stride == 0:
                    meter.sample()

        return wrapped

    def _wrap_namespace(self, owner, d, saved):
        for name, v in list(d.items()):
            if type(v) is _FUNC or type(v) is _GEN:
                saved.append((owner, name, v))
                setattr(owner, name, self._wrap(v))

    def _import(self, *a, **k):
        self.sample()
        mod = self._real_import(*a, **k)
        new = [m for m in library_modules(self.prefix) if m not in self._seen]
        if new:
            gc.collect()
            was = gc.mem_alloc()
            self._watch(new)
            gc.collect()
            self.extra += gc.mem_alloc() - was
        self.sample()
        return mod

    def __enter__(self):
        import builtins

        self._saved = []  # (module, json, had open)
        self._wrapped = []  # (owner, name, original)
        self._seen = []
        self._watch(self.modules)
        self._real_import = builtins.__import__
        if self.auto:
            builtins.__import__ = self._import
        gc.collect()
        self.base = self.peak = gc.mem_alloc()
        return self

    def _watch(self, modules):
        for m in modules:
            self._seen.append(m)
            d = m.__dict__
            own_open = "open" in d  # e.g. claw_memory.open(): a function, wrapped below
            self._saved.append((m, d.get("json"), own_open))
            if "json" in d:
                m.json = _Json(self, d["json"])
            if not own_open:
                m.open = self._open
            if not self.deep:
                continue
            self._wrap_namespace(m, d, self._wrapped)
            for v in list(d.values()):
                # Classes defined in this module (not imported ones: wrapped where defined).
                if isinstance(v, type) and getattr(v, "__module__", None) == m.__name__:
                    self._wrap_namespace(v, v.__dict__, self._wrapped)

    def __exit__(self, *exc):
        import builtins

        self.sample()
        builtins.__import__ = self._real_import
        for owner, name, v in reversed(self._wrapped):
            setattr(owner, name, v)
        for m, js, own_open in self._saved:
            if js is not None:
                m.json = js
            if not own_open:
                del m.__dict__["open"]
        return False

    @property
    def above(self):
        return self.peak - self.base
