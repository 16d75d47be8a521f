"""A stand-in for MicroPython's tools/manifestfile.py: runs manifests with recording globals.

Used by the board and packaging tests to see what a firmware build would freeze, without a
MicroPython checkout.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOARD = os.path.join(ROOT, "boards", "CLAW_S3")
PORT_DIR = "/<micropython>/ports/esp32"  # not on this machine: its manifest is only recorded


def frozen(manifest):
    """Repository-relative paths of the modules a manifest (repo-relative path) freezes."""
    run = ManifestRun()
    run.run(os.path.join(ROOT, manifest))
    return run.frozen


class ManifestRun:
    """Run manifests the way tools/manifestfile.py does, recording what they ask for.

    $(PORT_DIR) and $(BOARD_DIR) are substituted; includes under the port are recorded, not
    run; everything else is run once per file. A plain include() shares the including
    manifest's metadata() level (only require() opens a new one), so metadata() may be called
    once in all the files a manifest includes, as manifestfile.py enforces.
    """

    def __init__(self):
        self.calls = []          # (manifest path, name, args, kwargs)
        self.frozen = []         # repo-relative .py paths that package()/module() freeze
        self.ran = []
        self.metadata_calls = []  # manifests that called metadata()

    def _subst(self, path):
        return path.replace("$(PORT_DIR)", PORT_DIR).replace("$(BOARD_DIR)", BOARD)

    def run(self, path):
        path = os.path.normpath(path)
        if path in self.ran:
            return
        self.ran.append(path)
        here = os.path.dirname(path)

        def rec(name):
            def f(*a, **k):
                self.calls.append((path, name, a, k))
            return f

        def include(manifest_path, **kwargs):
            self.calls.append((path, "include", (manifest_path,), kwargs))
            paths = [manifest_path] if isinstance(manifest_path, str) else list(manifest_path)
            for p in paths:
                p = self._subst(p)
                if p.startswith(PORT_DIR):
                    continue
                p = os.path.join(here, p)
                if os.path.isdir(p):
                    p = os.path.join(p, "manifest.py")
                assert os.path.isfile(p), "include() of a missing manifest: %s" % p
                self.run(p)

        def metadata(**kwargs):
            self.calls.append((path, "metadata", (), kwargs))
            self.metadata_calls.append(path)
            assert len(self.metadata_calls) == 1, "Duplicate call to metadata() in %s" % path

        def package(package_path, files=None, base_path=".", opt=None):
            self.calls.append((path, "package", (package_path,), {"files": files}))
            top = os.path.normpath(os.path.join(here, self._subst(base_path), package_path))
            if files is not None:  # paths relative to the package, subfolders included
                for f in files:
                    p = os.path.join(top, f)
                    assert os.path.isfile(p), "package() names a missing file: %s" % p
                    self.frozen.append(os.path.relpath(p, ROOT).replace(os.sep, "/"))
                return
            for dirpath, dirnames, names in os.walk(top):
                dirnames[:] = [d for d in dirnames if d != "__pycache__"]
                for n in names:
                    if n.endswith(".py"):
                        rel = os.path.relpath(os.path.join(dirpath, n), ROOT)
                        self.frozen.append(rel.replace(os.sep, "/"))

        def module(module_path, base_path=".", opt=None):
            self.calls.append((path, "module", (module_path,), {}))
            p = os.path.normpath(os.path.join(here, self._subst(base_path), module_path))
            self.frozen.append(os.path.relpath(p, ROOT).replace(os.sep, "/"))

        env = {
            "include": include, "metadata": metadata, "package": package, "module": module,
            "require": rec("require"), "add_library": rec("add_library"),
            "freeze": rec("freeze"), "c_module": rec("c_module"),
        }
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), env)
