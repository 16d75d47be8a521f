# claw_memory: look inside a data root from the REPL (the host CLI uses the same functions).
# MIT license
#
#   >>> from claw_memory import inspect
#   >>> inspect.sessions()            # every session: bytes, records, pending, blocked
#   >>> inspect.history("chat:web:local:default_01", 5)
#   >>> inspect.items(); inspect.labels(); inspect.profile(); inspect.stats()
#
# Each function takes an opened memory (`mem=`) or a data root (`root=`, opened once and
# reused); it prints a compact table and returns the rows (`show=False` only returns them).
# A root without a long-term store (LITE) is opened in LITE mode: nothing of the store is
# created by looking at it.

from . import messages, text

_last = None  # (root, Memory): the root opened most recently


def _mem(root=None, mem=None):
    global _last
    if mem is not None:
        return mem
    from . import fsutil
    from .memory import FULL, LITE, Memory
    from .paths import Layout

    lay = Layout(root)
    if _last is not None and _last[0] == lay.root:
        return _last[1]
    mode = FULL if fsutil.exists(lay.records) else LITE
    _last = (lay.root, Memory(lay.root, mode=mode, extract=False))
    return _last[1]


def table(rows, cols, title=None):
    """Print rows (dicts) as a table of the given columns."""
    if title:
        print("\n== %s ==" % title)
    if not rows:
        print("(none)")
        return
    widths = [max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in cols]
    print("  ".join(c + " " * (w - len(c)) for c, w in zip(cols, widths)).rstrip())
    for r in rows:
        print("  ".join(str(r.get(c, "")) + " " * (w - len(str(r.get(c, ""))))
                        for c, w in zip(cols, widths)).rstrip())


def _show(rows, cols, show):
    if show:
        table(rows, cols)
    return rows


def sessions(root=None, show=True, mem=None):
    """Every session file: bytes, records (pending included), pending, blocked."""
    return _show(_mem(root, mem).sessions.list(), ("file", "bytes", "records", "pending", "blocked"), show)


def history(session_id, n=10, root=None, show=True, mem=None):
    """The last `n` messages of a session as (role, text) rows."""
    rows = []
    for m in _mem(root, mem).sessions.messages(session_id, backend="")[-n:]:
        row = messages.display(m)
        if show:
            row["text"] = messages.cut(row["text"])
        rows.append(row)
    return _show(rows, ("role", "text"), show)


def items(root=None, limit=None, show=True, mem=None):
    """Active long-term items, best first ([] without a store)."""
    store = _mem(root, mem).store
    out = []
    for it in (store.list() if store is not None else ()):
        if limit is not None and len(out) >= limit:
            break
        out.append({"id": it["id"], "access": it["access_count"], "labels": ",".join(it["summary_labels"]),
                    "content": messages.cut(it["content"]) if show else it["content"]})
    return _show(out, ("id", "access", "labels", "content"), show)


def labels(root=None, show=True, mem=None):
    """The label catalog ([] without a store)."""
    store = _mem(root, mem).store
    return _show(list(store.labels()) if store is not None else [], ("summary_id", "label", "ref_count"), show)


def profile(root=None, show=True, mem=None):
    """The profile documents (first line shown)."""
    prof = _mem(root, mem).profile
    rows = []
    for name in ("user", "soul", "identity"):
        body = prof.read(name)
        rows.append({"name": name, "bytes": len(body.encode()), "text": messages.cut(body) if show else body})
    return _show(rows, ("name", "bytes", "text"), show)


def stats(root=None, show=True, mem=None):
    """Bytes per layer, records, and the tokens each layer adds to a request (estimate;
    for sessions, the largest session's replayed history)."""
    from . import fsutil
    from ._compat import ilistdir
    from .core import Request

    mem = _mem(root, mem)

    def size(path):
        if not fsutil.is_dir(path):
            return max(fsutil.size(path), 0)
        return sum(size(path + "/" + name) for name, is_dir in ilistdir(path))

    sess = mem.sessions.list()
    history = 0
    for r in sess:
        n = 0
        for kind, fmt, raw in mem.sessions.records(file=r["file"]):
            n += text.estimate_tokens(raw.decode()) + 4
        history = max(history, n)
    provs = {p.name: p for p in mem.providers()}
    req = Request("")

    def tokens(name):
        return text.estimate_tokens(provs[name].collect(req) or "")

    profile_bytes = sum(size(mem.profile.path(n)) for n in ("user", "soul", "identity"))
    rows = [
        {"layer": "sessions", "bytes": size(mem.layout.sessions),
         "records": sum(r["records"] for r in sess), "tokens": history},
        {"layer": "profile", "bytes": profile_bytes, "records": 3, "tokens": tokens("Editable Profile Memory")},
        {"layer": "long-term", "bytes": size(mem.layout.memory) - profile_bytes,
         "records": mem.store.count() if mem.store is not None else 0, "tokens": tokens("Long-term Memory")},
        {"layer": "skills", "bytes": 0, "records": 0, "tokens": tokens("Memory Skills")},
    ]
    return _show(rows, ("layer", "bytes", "records", "tokens"), show)
