#!/usr/bin/env python3
"""Regenerate tests_host/golden/workload.json from the current code.

    python tools/gen_golden.py

Only when the on-disk bytes change on purpose (a format or behaviour change); the commit
that regenerates it says why. tests_host/mp/test_golden.py compares against it.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools  # noqa: E402

OUT = os.path.join(ROOT, "tests_host", "golden", "workload.json")


def main():
    env = dict(os.environ)
    env["TZ"] = "UTC"
    env["MICROPYPATH"] = os.pathsep.join([ROOT] + [os.path.join(ROOT, *p) for p in (
        ("tests_host", "support"), ("claw_memory_cli", "runtime"), ("tests_host", "mp"))] + [".frozen"])
    code = "import json, test_golden; print('GOLDEN ' + json.dumps(test_golden.snapshots()))"
    r = subprocess.run([hosttools.micropython(), "-X", "heapsize=8M", "-c", code], cwd=ROOT,
                       env=env, capture_output=True, text=True, check=False)
    for line in r.stdout.splitlines():
        if line.startswith("GOLDEN "):
            snaps = json.loads(line[7:])
            os.makedirs(os.path.dirname(OUT), exist_ok=True)
            with open(OUT, "w", encoding="utf-8") as f:
                json.dump(snaps, f, indent=1, sort_keys=True, ensure_ascii=False)
                f.write("\n")
            print("wrote %s (%d steps)" % (os.path.relpath(OUT, ROOT), len(snaps)))
            return 0
    sys.exit("workload failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])


if __name__ == "__main__":
    sys.exit(main())
