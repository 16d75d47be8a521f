"""Output: tables, JSON, progress and status on stderr, confirmation, errors with exit codes.

On a terminal, tables and progress bars are drawn with rich (installed with esptool);
otherwise (a pipe, a file, a test) the output is plain text: the same tables as the board's
`claw_memory.inspect.table`, and one status line on stderr where a terminal would show a bar.
"""

import json
import sys

from claw_memory import inspect
from claw_memory.text import shown, unsafe

EXIT_OK = 0
EXIT_PROBLEMS = 1  # the command ran and found problems (verify), failed, or no data root there
EXIT_USAGE = 2
EXIT_TOOL = 3  # a needed host tool, the board, or the library on the board is not available
EXIT_PIPE = 141  # stdout's reader went away (`| head`): 128 + SIGPIPE, as cat or git end then


class CliError(Exception):
    """A clear, expected failure: printed without a traceback, with an exit code."""

    def __init__(self, message, code=EXIT_PROBLEMS):
        super().__init__(message)
        self.code = code


def no_session(args, where):
    """The CliError of a --session the data root does not have, said with the user's path
    and command (the library's message names its REPL helper)."""
    return CliError("no session %r in %s (`claw-memory inspect %s` lists them)" % (
        args.session, where, args.root or "-p %s" % args.port))


def plural(n, word, many=None):
    """`1 session`, `2 sessions` (`many`: the plural when it is not word + "s")."""
    return "%d %s" % (n, word if n == 1 else many or word + "s")


def counts(c):
    """What a bundle holds, in words (export, import)."""
    arc = ", %s" % plural(c["segments"], "archive segment") if c.get("segments") else ""
    return "%s (%s%s), %s, %s" % (plural(c["sessions"], "session"), plural(c["records"], "record"),
                                  arc, plural(c["items"], "item"), plural(c["chat_maps"], "chat map"))


def _tty(stream):
    return hasattr(stream, "isatty") and stream.isatty()


def console(stream):
    """A rich Console on `stream` when it is a terminal and rich is installed, else None."""
    if not _tty(stream):
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream, highlight=False, force_terminal=True)


def json_safe(doc):
    """JSON text `doc` with the characters text.unsafe names escaped (`\\u009b`, `\\u202e`):
    json leaves DEL, C1 and the bidi controls raw. The same value, and nothing a terminal acts
    on. (json escapes C0 in strings: the C0 left, its indentation, stays.)"""
    if not any(unsafe(c) and c >= " " for c in doc):
        return doc
    return "".join("\\u%04x" % ord(c) if unsafe(c) and c >= " " else c for c in doc)


def emit_json(obj):
    sys.stdout.write(json_safe(json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True)))
    sys.stdout.write("\n")


def say(text):
    """A status line for the user (stderr, so that stdout stays the command's output)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


_NUMERIC = ("bytes", "records", "pending", "tokens", "access", "ref_count", "files")


def table(rows, cols, title=None):
    """Print rows (dicts) as a table: rich on a terminal, else inspect.table; each cell and
    the title rendered as data (text.shown)."""
    con = console(sys.stdout)
    if con is None:
        inspect.table(rows, cols, title)
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    title = shown(title) if title else title
    if not rows:
        if title:
            con.print(Text("\n" + title, style="bold"))
        con.print("(none)")
        return
    t = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD)
    for c in cols:
        t.add_column(c, justify="right" if c in _NUMERIC else "left", overflow="fold")
    for r in rows:
        t.add_row(*[Text(shown(str(r.get(c, "")))) for c in cols])
    con.print(t)


class Progress:
    """Progress of a task on stderr, in steps or in bytes (`nbytes=True`): a rich bar on a
    terminal; otherwise the `status` line (when given) once, at the start."""

    def __init__(self, total, label, nbytes=False, status=None):
        self.total = max(total, 1)
        self._bar = None
        con = console(sys.stderr)
        if con is None:
            if status:
                say(status)
            return
        from rich import progress as rp

        if status:
            con.print(status)
        cols = [rp.TextColumn("{task.description}"), rp.BarColumn(bar_width=24)]
        if nbytes:
            cols += [rp.DownloadColumn(), rp.TransferSpeedColumn(), rp.TimeRemainingColumn()]
        else:
            cols += [rp.MofNCompleteColumn(), rp.TimeElapsedColumn()]
        cols.append(rp.TextColumn("{task.fields[what]}"))
        self._bar = rp.Progress(*cols, console=con, transient=False)
        self._task = self._bar.add_task(label, total=self.total, what="")
        self._bar.start()

    def step(self, what="", n=1):
        if self._bar is not None:
            self._bar.update(self._task, advance=n, what=what[-24:])

    def done(self):
        if self._bar is not None:
            self._bar.update(self._task, completed=self.total)
            self._bar.stop()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class status:
    """`with status("text"):` a spinner on a terminal, else the text once on stderr."""

    def __init__(self, text):
        self.text = text
        self._st = None

    def __enter__(self):
        con = console(sys.stderr)
        if con is None:
            say(self.text)
        else:
            self._st = con.status(self.text)
            self._st.start()
        return self

    def __exit__(self, *exc):
        if self._st is not None:
            self._st.stop()


def confirm(question, yes=False):
    """Ask before something that cannot be undone; `--yes` answers for the user. Without a
    terminal to ask on, refuse (exit 2) rather than guess."""
    if yes:
        return True
    if not _tty(sys.stdin):
        raise CliError("%s: not confirmed (no terminal to ask on): pass --yes" % question, EXIT_USAGE)
    sys.stderr.write("%s [y/N] " % question)
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
