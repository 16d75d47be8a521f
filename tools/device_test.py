#!/usr/bin/env python3
"""Device tests: the scripts in tests_device/ run on a board through mpremote.

    python -m tools.device_test --port /dev/ttyACM0     # a real board (claw_memory deployed now)
    python -m tools.device_test --virtual               # the virtual board (CI)

Steps: deploy claw_memory to the board's lib/ with `claw-memory deploy` (for a real board
compiled for xtensawin; the virtual board loads the sources), copy the scripted LLM and a
config naming the test's data root, run a conversation through the reference agent, soft-reset
the board, check that history and memories survived and the next turn works, use the REPL
inspection helpers, then remove the test's data root. Exit 0 when every step passed.
"""

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools  # noqa: E402
from claw_memory_cli import main as cli  # noqa: E402

SCRIPTS = ("dev_conversation.py", "soft-reset", "dev_after_reboot.py", "dev_inspect.py", "dev_cleanup.py")


def mpremote(port, *args, timeout=120):
    cmd = [hosttools.find("mpremote"), "connect", port, "resume"] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def run(port, data_root, compile_arch):
    failures = 0
    rc = cli.main(["deploy", "--port", port] + (["--source"] if compile_arch is None else []))
    print("deploy: %s" % ("ok" if rc == 0 else "FAILED (%d)" % rc))
    if rc:
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "devtest_config.py")
        with open(cfg, "w") as f:
            f.write("ROOT = %r\n" % data_root)
        for src in (cfg, os.path.join(ROOT, "claw_memory_cli", "runtime", "scripted_llm.py")):
            rc, out = mpremote(port, "fs", "cp", src, ":lib/")
            if rc:
                print("copy %s failed: %s" % (os.path.basename(src), out.strip()))
                return 1
    for step in SCRIPTS:
        if step == "soft-reset":
            rc, out = mpremote(port, "soft-reset")
            print("soft-reset: %s" % ("ok" if rc == 0 else "FAILED"))
            failures += rc != 0
            continue
        rc, out = mpremote(port, "run", os.path.join(ROOT, "tests_device", step), timeout=300)
        passed = rc == 0 and "DEVTEST PASS" in out
        print("%s: %s" % (step, "PASS" if passed else "FAIL"))
        if not passed or os.environ.get("DEVTEST_VERBOSE"):
            print("    " + out.strip().replace("\n", "\n    "))
        failures += not passed
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", help="serial port of a board running MicroPython")
    where.add_argument("--virtual", action="store_true", help="start a virtual board (unix port on a pty)")
    ap.add_argument("--image", help="virtual board flash image (default: a temporary file)")
    ap.add_argument("--data-root", help="data root for the test on the board (default: devtest under the cwd)")
    args = ap.parse_args(argv)
    if args.port:
        return run(args.port, args.data_root or "/devtest", "xtensawin")
    from tools.virtual_board import VirtualBoard

    with tempfile.TemporaryDirectory() as tmp:
        image = args.image or os.path.join(tmp, "board.img")
        with VirtualBoard(image, host_path=False) as board:
            print("virtual board on %s" % board.port)
            return run(board.port, args.data_root or "/flash/devtest", None)


if __name__ == "__main__":
    sys.exit(main())
