"""The benchmark behind `python3 tools/bench.py` (see its docstring for what it measures).

CPython modules here drive it: `runner` (the plan, one MicroPython process per case),
`figures` (device time, medians, per-operation summaries), `targets` and `tables` (the report's
parts) and `report` (the whole report, docs/PERFORMANCE.md). MicroPython modules: `mp/` (the
cases, `bench_main.py` that runs one, the heap meter, the import-heap probe) and `baselines/`
(ESP-Claw's C code ported file operation for file operation, and two plain MicroPython peers).
"""
