# Runs one benchmark case: micropython bench_main.py <case> '<json args>'.
# MIT license
#
# A script this small costs the compiler almost no heap, so the cases (bench_mp and what it
# imports) can be loaded precompiled (.mpy) when the heap itself is what is measured.
import json
import sys

import bench_mp

getattr(bench_mp, "case_" + sys.argv[1])(json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
