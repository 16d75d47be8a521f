# claw_memory: the editable profile documents (soul, identity, user).
# MIT license
#
# Three Markdown files under memory/ go whole into every system prompt. The library creates
# them when missing (from a seed folder when one is configured, as ESP-Claw's
# /system/.recovery/memory/, else from short templates) and never changes them on its own;
# only an explicit write (the profile tool, on the user's request) replaces one, atomically.

from . import fsutil, text
from ._compat import const

NAMES = ("user", "soul", "identity")  # the order the provider injects them in
FILES = {"user": "user.md", "soul": "soul.md", "identity": "identity.md"}
TITLES = {"user": "User Profile", "soul": "Agent Soul", "identity": "Agent Identity Card"}
DEFAULTS = {
    "soul": "# Soul\n\nDescribe who the agent is, what it values, and how it prefers to help.\n",
    "identity": "# Identity Card\n\n- Name:\n- Role:\n- Personality:\n- Strengths:\n",
    "user": "# User\n\nWrite down who the current user is, their preferences, and any standing guidance.\n",
}
MAX_BYTES = const(8192)


class Profile:
    def __init__(self, directory, seed_dir=None, max_bytes=MAX_BYTES):
        self.dir = directory
        self.seed_dir = seed_dir
        self.max_bytes = max_bytes

    def path(self, name):
        if name not in FILES:
            raise ValueError("profile document must be one of: user, soul, identity")
        return self.dir + "/" + FILES[name]

    def ensure(self):
        """Create the missing documents; returns the names created."""
        made = []
        fsutil.makedirs(self.dir)
        for name in NAMES:
            p = self.path(name)
            fsutil.recover([p], valid=lambda t: True)
            if fsutil.exists(p):
                continue
            data = None
            if self.seed_dir:
                try:
                    data = fsutil.read_bounded(self.seed_dir + "/" + FILES[name], self.max_bytes)
                except ValueError:
                    data = None
            fsutil.replace(p, data if data else DEFAULTS[name].encode())
            made.append(name)
        return made

    def _read(self, name):
        # (one look-up of its name, an open: the documents are read for each request)
        data = fsutil.read_bounded(self.path(name), self.max_bytes, head=True)
        if data is None:
            return ""
        # A document over the bound is cut on a character boundary, never inside one.
        return text.clean(data)

    def read(self, name=None):
        """One document's text, or {"user","soul","identity"} of all of them ("" if missing)."""
        if name is not None:
            return self._read(name)
        return {n: self._read(n) for n in NAMES}

    def write(self, name, content):
        """Replace a document (atomically); True when its text changed."""
        body = text.clean(content)
        if len(body.encode()) > self.max_bytes:
            raise ValueError("profile document larger than %d bytes" % self.max_bytes)
        if not text.trim(body):
            raise ValueError("content is required")
        if body == self._read(name):
            return False
        fsutil.replace(self.path(name), body.encode())
        return True
