"""`claw-memory`: the host command line of claw_memory."""

import argparse
import sys

import claw_memory

from . import hosttools

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


def cmd_doctor(args):
    missing = 0
    for tool, path, ver, purpose in hosttools.doctor():
        if path and ver:
            print("ok       %-12s %s (%s)" % (tool, ver, path))
        else:
            missing += 1
            why = "not found" if not path else "found at %s but does not run" % path
            print("MISSING  %-12s %s; needed for: %s" % (tool, why, purpose))
    if missing:
        print("\n%d tool(s) missing: run `python3 tools/dev.py setup` to install them." % missing)
        return EXIT_FAIL
    return EXIT_OK


def cmd_demo(args):
    import os
    import subprocess

    mp = hosttools.micropython()
    if not mp:
        print("claw-memory: no MicroPython unix port found (run python3 tools/dev.py setup)",
              file=sys.stderr)
        return EXIT_FAIL
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join(
        [hosttools.ROOT, os.path.join(hosttools.ROOT, "tools", "mplib"), ".frozen"])
    script = os.path.join(hosttools.ROOT, "tools", "mplib", "smoke.py")
    return subprocess.run([mp, script], env=env).returncode


def build_parser():
    p = argparse.ArgumentParser(prog="claw-memory", description=__doc__)
    p.add_argument("--version", action="version", version="claw-memory " + claw_memory.__version__)
    sub = p.add_subparsers(dest="cmd", metavar="command")
    d = sub.add_parser("doctor", help="report the host tools found, with versions")
    d.set_defaults(func=cmd_doctor)
    d = sub.add_parser("demo", help="run the demo under the unix port on simulated flash")
    d.set_defaults(func=cmd_demo)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
