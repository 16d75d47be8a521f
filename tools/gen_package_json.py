#!/usr/bin/env python3
"""Write package.json (for `mpremote mip install github:<owner>/<repo>`) from claw_memory/.

Every module of the package is listed, so mip installs exactly what manifest.py freezes.
Run it after adding or removing a module; a test fails while package.json is out of date.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from claw_memory_cli import hosttools  # noqa: E402


def modules():
    return hosttools.package_modules()


def version():
    with open(os.path.join(ROOT, "claw_memory", "__init__.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def render():
    urls = ",\n".join("    " + json.dumps([m, m]) for m in modules())
    return '{\n  "urls": [\n%s\n  ],\n  "deps": [["aiohttp", "latest"]],\n  "version": %s\n}\n' % (
        urls, json.dumps(version()))


def main():
    path = os.path.join(ROOT, "package.json")
    text = render()
    if "--check" in sys.argv:
        with open(path) as f:
            if f.read() != text:
                sys.exit("package.json is out of date: run python3 tools/gen_package_json.py")
        return
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
