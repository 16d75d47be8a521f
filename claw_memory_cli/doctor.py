"""`claw-memory doctor`: the host tools found, with versions, and a board's library (-p)."""

import os

from . import deploy, hosttools
from .roots import PORT_ENV
from .ui import EXIT_OK, EXIT_PROBLEMS, emit_json


def cmd_doctor(args):
    args.port = args.port or os.environ.get(PORT_ENV)  # (as every board command takes it)
    missing = 0
    rows = []
    for tool, path, ver, purpose in hosttools.doctor():
        rows.append({"tool": tool, "path": path, "version": ver, "for": purpose})
        if not (path and ver):
            missing += 1
    got = None
    if args.port:  # only when asked (-p, $CLAW_PORT): a board is not one of the host's tools
        got = deploy.survey(args.port)
        rows.append({"tool": "board", "path": args.port,
                     "version": got["version"] and "claw_memory %s" % got["version"],
                     "file": got["file"], "for": "the library the board runs",
                     "shadowed": [list(p) for p in got["pairs"]]})
    board_bad = got is not None and (not got["version"] or got["pairs"])
    if args.json:
        emit_json(rows)
        return EXIT_PROBLEMS if missing or board_bad else EXIT_OK
    for r in rows:
        if r["tool"] == "board":
            continue
        if r["path"] and r["version"]:
            print("ok       %-12s %s (%s)" % (r["tool"], r["version"], r["path"]))
        else:
            why = "not found" if not r["path"] else "found at %s but does not run" % r["path"]
            print("MISSING  %-12s %s; needed for: %s" % (r["tool"], why, r["for"]))
    if got is not None:
        if got["version"]:
            print("ok       %-12s claw_memory %s from %s (%s)" % ("board", got["version"], got["file"],
                                                               args.port))
        else:
            print("MISSING  %-12s claw_memory does not import on %s (%s): `claw-memory deploy -p %s`"
                  % ("board", args.port, got["file"], args.port))
        for py, mpy in got["pairs"]:
            print("WARNING  %s is beside %s: MicroPython imports the .py, never the .mpy" % (py, mpy))
    if missing:
        print("\n%d tool(s) missing: they are dependencies of the claw-memory package (reinstall "
              "it; in a checkout: `python3 tools/dev.py setup`)." % missing)
    if got is not None and got["pairs"]:
        print("\n%d module(s) on %s shadow their .mpy (a mip install over a deploy?): "
              "`claw-memory deploy -p %s` makes lib/claw_memory exactly the deployed set again, "
              "or remove one file of each pair." % (len(got["pairs"]), args.port, args.port))
    return EXIT_PROBLEMS if missing or board_bad else EXIT_OK
