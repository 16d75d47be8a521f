# Heap held by importing claw_memory, measured in a fresh interpreter (tools/bench.py runs it).
import gc

gc.collect()
a = gc.mem_alloc()
import claw_memory.memory  # noqa: E402,F401 -- what claw_memory.open() needs

gc.collect()
b = gc.mem_alloc()
from claw_memory import agent, inspect, llm  # noqa: E402,F401

gc.collect()
c = gc.mem_alloc()
from flashsim import mount  # noqa: E402

dev = mount("lfs2", "/flash", blocks=64)
gc.collect()
c2 = gc.mem_alloc()
mem = claw_memory.open("/flash", extract=False)  # noqa: F821
gc.collect()
d = gc.mem_alloc()
print('BENCH {"case": "import_heap", "memory": %d, "all_modules": %d, "opened": %d}' % (b - a, c - a, d - c2))
