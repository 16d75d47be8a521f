#!/usr/bin/env python3
"""Write the mip package files (`mpremote mip install ...`) from the manifests.

    package.json          the umbrella: every module, and aiohttp (manifest.py)
    package-lite.json     LITE: profile, MEMORY.md, session history, inspect (manifests/lite.py)
    package-full.json     lite + the long-term store, its tools and extraction (manifests/full.py)
    package-agent.json    lite + the reference agent loop; no aiohttp (manifests/agent.py)
    package-llm.json      lite + the LLM clients; deps: aiohttp (manifests/llm.py)

The manifests are the one list of what each piece holds: a piece includes the pieces it
needs (`include("lite.py")`) and requires the packages from outside (`require("aiohttp")`).
A package file lists every module of its piece and of the pieces it includes, so that each
installs alone, from a checkout or from GitHub; its `deps` are the outside packages. (mip
resolves a dep that is not a URL through the package index, and a URL needs the
repository's own GitHub name; mpremote opens a relative path dep from the current directory,
not from the package file, and the board's mip not at all.)

Run it after adding or removing a module; a test fails while a package file is out of date
(`--check` says which).
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests_host", "support"))

from claw_memory_cli import hosttools  # noqa: E402
from manifest_sim import ManifestRun  # noqa: E402

# package file -> the manifest it is made from
PIECES = {
    "package.json": "manifest.py",
    "package-lite.json": "manifests/lite.py",
    "package-full.json": "manifests/full.py",
    "package-agent.json": "manifests/agent.py",
    "package-llm.json": "manifests/llm.py",
}


def modules():
    return hosttools.package_modules()


def version():
    with open(os.path.join(ROOT, "claw_memory", "__init__.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def piece(manifest):
    """(files, outside packages) of a manifest and everything it includes."""
    run = ManifestRun()
    run.run(os.path.join(ROOT, manifest))
    requires = sorted({c[2][0] for c in run.calls if c[1] == "require"})
    return sorted(run.frozen), requires


def render(name="package.json"):
    files, requires = piece(PIECES[name])
    urls = ",\n".join("    " + json.dumps([m, m]) for m in files)
    deps = ", ".join(json.dumps([r, "latest"]) for r in requires)
    return '{\n  "urls": [\n%s\n  ],\n  "deps": [%s],\n  "version": %s\n}\n' % (
        urls, deps, json.dumps(version()))


def main():
    stale = []
    for name in PIECES:
        path = os.path.join(ROOT, name)
        text = render(name)
        if "--check" in sys.argv:
            old = None
            if os.path.exists(path):
                with open(path) as f:
                    old = f.read()
            if old != text:
                stale.append(name)
            continue
        with open(path, "w") as f:
            f.write(text)
    if stale:
        sys.exit("%s out of date: run python3 tools/gen_package_json.py" % ", ".join(stale))


if __name__ == "__main__":
    main()
