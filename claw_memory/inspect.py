# claw_memory: look inside a data root from the REPL (the host CLI uses the same functions).
# MIT license
#
#   >>> from claw_memory import inspect
#   >>> inspect.sessions()            # every session: bytes, records, pending, blocked
#   >>> inspect.history("chat:web:local:default_01", 5)
#   >>> inspect.items(); inspect.labels(); inspect.profile(); inspect.stats()
#
# Each function prints a compact table and returns the rows; `show=False` only returns them.

from . import text

_W = 60  # characters of text shown per cell


def _mem(root):
    from .memory import Memory

    return Memory(root, extract=False)


def _cut(s, n=_W):
    s = (s or "").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "~"


def _pad(s, w):
    s = str(s)
    return s + " " * (w - len(s))


def _table(rows, cols, show):
    if show:
        widths = [max([len(c)] + [len(str(r[c])) for r in rows]) for c in cols]
        print("  ".join(_pad(c, w) for c, w in zip(cols, widths)).rstrip())
        for r in rows:
            print("  ".join(_pad(r[c], w) for c, w in zip(cols, widths)).rstrip())
        if not rows:
            print("(none)")
    return rows


def sessions(root=None, show=True):
    """Every session file: bytes, records (pending included), pending, blocked."""
    rows = _mem(root).sessions.list()
    return _table(rows, ("file", "bytes", "records", "pending", "blocked"), show)


def history(session_id, n=10, root=None, show=True):
    """The last `n` messages of a session as (role, text) rows."""
    rows = []
    for m in _mem(root).sessions.messages(session_id, backend="")[-n:]:
        if m.get("role") == "tool":
            body = "[result %s] %s" % (m.get("tool_call_id"), m.get("content"))
        elif m.get("tool_calls"):
            body = "[calls %s]" % ", ".join(c.get("function", {}).get("name", "?") for c in m["tool_calls"])
        else:
            from .session import visible_text

            body = visible_text(m.get("content"))
        rows.append({"role": m.get("role"), "text": _cut(body) if show else body})
    return _table(rows, ("role", "text"), show)


def items(root=None, limit=None, show=True):
    """Active long-term items, best first."""
    out = []
    for it in _mem(root).store.list()[:limit]:
        out.append({"id": it["id"], "access": it["access_count"], "labels": ",".join(it["summary_labels"]),
                    "content": _cut(it["content"]) if show else it["content"]})
    return _table(out, ("id", "access", "labels", "content"), show)


def labels(root=None, show=True):
    """The label catalog."""
    rows = _mem(root).store.labels()
    return _table(rows, ("summary_id", "label", "ref_count"), show)


def profile(root=None, show=True):
    """The profile documents (first line shown)."""
    prof = _mem(root).profile
    rows = []
    for name in ("user", "soul", "identity"):
        body = prof.read(name)
        rows.append({"name": name, "bytes": len(body.encode()), "text": _cut(body) if show else body})
    return _table(rows, ("name", "bytes", "text"), show)


def stats(root=None, show=True):
    """Bytes per layer, records, and the tokens each layer adds to a request (estimate;
    for sessions, the largest session's replayed history)."""
    from . import fsutil
    from ._compat import ilistdir
    from .core import Request

    mem = _mem(root)

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

    rows = [
        {"layer": "sessions", "bytes": size(mem.layout.sessions),
         "records": sum(r["records"] for r in sess), "tokens": history},
        {"layer": "profile", "bytes": sum(size(mem.profile.path(n)) for n in ("user", "soul", "identity")),
         "records": 3, "tokens": tokens("Editable Profile Memory")},
        {"layer": "long-term", "bytes": size(mem.layout.memory) - sum(
            size(mem.profile.path(n)) for n in ("user", "soul", "identity")),
         "records": len(mem.store.list()) if mem.store is not None else 0, "tokens": tokens("Long-term Memory")},
        {"layer": "skills", "bytes": 0, "records": 0, "tokens": tokens("Memory Skills")},
    ]
    return _table(rows, ("layer", "bytes", "records", "tokens"), show)
