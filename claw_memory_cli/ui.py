"""Output helpers: tables, JSON, progress bars, errors with exit codes."""

import json
import sys

from claw_memory import inspect

EXIT_OK = 0
EXIT_PROBLEMS = 1  # the command ran and found problems (verify) or failed
EXIT_USAGE = 2
EXIT_TOOL = 3  # a needed host tool or the board is not available


class CliError(Exception):
    """A clear, expected failure: printed without a traceback, with an exit code."""

    def __init__(self, message, code=EXIT_PROBLEMS):
        super().__init__(message)
        self.code = code


def emit_json(obj):
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=1, sort_keys=True)
    sys.stdout.write("\n")


def table(rows, cols, title=None):
    inspect.table(rows, cols, title)


class Progress:
    """A one-line progress bar on stderr (only drawn on a terminal)."""

    def __init__(self, total, label, stream=None):
        self.total = max(total, 1)
        self.label = label
        self.n = 0
        self.stream = stream or sys.stderr
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()

    def step(self, what=""):
        self.n += 1
        if self.live:
            width = 24
            done = width * self.n // self.total
            self.stream.write("\r%s [%s%s] %d/%d %s\x1b[K" % (
                self.label, "#" * done, "." * (width - done), self.n, self.total, what[:40]))
            self.stream.flush()

    def done(self):
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
