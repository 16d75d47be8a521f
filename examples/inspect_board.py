"""Look at a board's memory from the host, with the claw_memory package itself.

    .venv/bin/python examples/inspect_board.py -p /dev/ttyACM0 [--device-root /]

Copies the board's data root over its serial REPL into a temporary folder (as
`claw-memory inspect -p` does: the board is not changed and needs no claw_memory when
--device-root is given), opens the copy with the library, and prints every session with its
last message, the most recalled memories, and the user profile.
"""

import argparse
import os
import shutil
import sys
import tempfile

import claw_memory
from claw_memory import messages
from claw_memory_cli import board
from claw_memory_cli.ui import CliError


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--port", required=True, help="the board's serial port")
    ap.add_argument("--device-root", help="the data root on the board (default: the library's choice)")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="inspect-board-")
    try:
        with board.Board(args.port) as b:
            root = board.device_root(b, args.device_root)
            b.pull(root, tmp, "%s:%s" % (args.port, root))
        # FULL when the board's root has a long-term store; LITE opens no store
        mode = "full" if os.path.exists(os.path.join(tmp, "memory", "memory_records.jsonl")) else "lite"
        mem = claw_memory.open(tmp, mode, extract=False, create=False)
        print("board %s, data root %s" % (args.port, root))
        for s in mem.sessions.list():
            msgs = mem.sessions.messages(None, backend="", file=s["file"], tokens=0)
            last = messages.cell(messages.display(msgs[-1])["text"], 60) if msgs else "(empty)"
            print("session %s: %d records, last: %s" % (s["file"], s["records"], last))
        items = []
        if mem.store is not None:
            mem.store.compact()  # on the copy: fold the recall counts still in the digest
            items = sorted(mem.store.list(), key=lambda i: -i["access_count"])[:5]
        for it in items:
            print("memory %s (recalled %d times): %s" % (it["id"], it["access_count"], it["content"]))
        user = [line for line in mem.profile.read("user").splitlines() if line.strip()]
        print("user profile:", " / ".join(user) or "(none)")
        return 0
    except CliError as e:
        print("inspect_board: %s" % e, file=sys.stderr)
        return e.code
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
