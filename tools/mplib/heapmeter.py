# Heap high-water of library operations under the unix port.
# MIT license
#
# MicroPython has no allocation hook, so the meter samples: it wraps `json` and `open` in the
# modules it watches (watch claw_memory.text too: its json_value() does the library's parsing)
# and, at each call (before and after), runs gc.collect() and reads gc.mem_alloc(). Those calls
# are where the library reads and parses, so the samples catch the live heap at its working
# points. `peak - base` is the heap held above idle.

import gc


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


class Meter:
    def __init__(self, *modules):
        self.modules = modules
        self.base = self.peak = 0
        self.samples = 0

    def sample(self):
        gc.collect()
        a = gc.mem_alloc()
        self.samples += 1
        if a > self.peak:
            self.peak = a

    def _open(self, *a, **k):
        self.sample()
        return open(*a, **k)

    def __enter__(self):
        self._saved = []
        for m in self.modules:
            d = m.__dict__
            self._saved.append((m, d.get("json"), "open" in d))
            if "json" in d:
                m.json = _Json(self, d["json"])
            m.open = self._open
        gc.collect()
        self.base = self.peak = gc.mem_alloc()
        return self

    def __exit__(self, *exc):
        self.sample()
        for m, js, had_open in self._saved:
            if js is not None:
                m.json = js
            if not had_open:
                del m.__dict__["open"]
        return False

    @property
    def above(self):
        return self.peak - self.base
