# claw_memory: look inside a data root from the REPL (the host CLI uses the same functions).
# MIT license
#
#   >>> from claw_memory import inspect
#   >>> inspect.sessions()            # every session: id, file, bytes, records, pending, blocked
#   >>> inspect.history()             # the next request's session: its last 10 messages
#   >>> inspect.history("chat:web:local:default_01", 5)   # or a file name "s_..._<hash>.log"
#   >>> inspect.items(); inspect.labels(); inspect.profile(); inspect.stats()
#   >>> inspect.why("mem-1800000000-0001")   # where a memory came from
#   >>> inspect.recall("where does my sister live")   # ranked recall, with scores
#   >>> inspect.context()             # what the next request would carry, tokens per layer
#   >>> inspect.context(message="hi") # ... and the memories that message would bring in
#
# Each function prints a compact table and returns None; with `rows=True` it prints nothing
# and returns the rows (dicts) instead. Each takes an opened memory (`mem=`) or a data root
# (`root=`, default: the one claw_memory.open() picks; opened once and reused). Looking never
# creates a data root: a folder without `sessions/` and `memory/` raises OSError. A root is
# opened in the mode its files show (paths.Layout.mode: LITE when MEMORY.md is there without
# a store), so nothing of the store is created in a LITE root.

import os

from . import fsutil, jsonraw, messages, text
from ._compat import ilistdir

_last = None  # (root, Memory): the root opened most recently
_COLS = ("id", "file", "bytes", "records", "pending", "blocked")


def _mem(root=None, mem=None):
    global _last
    if mem is not None:
        return mem
    from .memory import Memory
    from .paths import Layout

    lay = Layout(root)
    if _last is not None and _last[0] == lay.root:
        return _last[1]
    _last = (lay.root, Memory(lay.root, mode=lay.mode(), extract=False, create=False))
    return _last[1]


def table(rows, cols, title=None):
    """Print rows (dicts) as a table of the given columns, each cell and the title rendered
    as data (text.shown: stored text may hold terminal escapes)."""
    if title:
        print("\n== %s ==" % text.shown(title))
    if not rows:
        print("(none)")
        return
    cells = [[text.shown(str(r.get(c, ""))) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    print("  ".join(c + " " * (w - len(c)) for c, w in zip(cols, widths)).rstrip())
    for row in cells:
        print("  ".join(v + " " * (w - len(v)) for v, w in zip(row, widths)).rstrip())


def _out(data, shown, cols, rows, title=None):
    if rows:
        return data
    table(shown, cols, title)
    return None


def _stream(rows, cols, widths, title=None):
    """Print rows (dicts) as they come, in columns of fixed widths (a longer value widens
    its own line only)."""
    if title:
        print("\n== %s ==" % text.shown(title))
    print("  ".join(c + " " * (w - len(c)) for c, w in zip(cols, widths)).rstrip())
    n = 0
    for r in rows:
        row = [text.shown(str(r.get(c, ""))) for c in cols]
        print("  ".join(v + " " * (w - len(v)) for v, w in zip(row, widths)).rstrip())
        n += 1
    if not n:
        print("(none)")


_WIDTHS = (36, 44, 7, 7, 7, 7)


def sessions(root=None, rows=False, mem=None):
    """Every session: id (from the chat maps; None when no map names it), file, bytes,
    records (pending included), pending, blocked, printed as they are read (Sessions.list():
    the sessions the chat maps name first, also those with no turn yet, then the others)."""
    it = _mem(root, mem).sessions.list()
    if rows:
        return list(it)
    _stream((dict(r, id=r["id"] or "?") for r in it), _COLS, _WIDTHS)
    return None


def _mtime(path):
    try:
        return os.stat(path)[8]
    except OSError:
        return -1


def _newest(mem):
    """(file name, mtime) of the session written last, (None, -1) when there is none."""
    from .session import is_log_name
    from .session.format import PEND

    d = mem.sessions.dir
    best = None  # (mtime, file name): ties go to the name, so that the choice is stable
    if fsutil.is_dir(d):
        for name, is_dir, _ in ilistdir(d):
            log = name[: -len(PEND)] if name.endswith(PEND) else name
            if is_dir or not is_log_name(log):
                continue
            key = (_mtime(d + "/" + name), log)
            if best is None or key > best:
                best = key
    return (best[1], best[0]) if best else (None, -1)


def _next(mem):
    """(file name, session id) of the session the next request goes to, as the agent picks
    it: the current session of the chat used last (its map or a session it names written
    last; a map written as late as the newest session wins: `/session new` after a turn), or
    the newest session when no chat names it; (None, None) when there is none. The maps are
    streamed, one at a time."""
    from .chats import map_file

    log, t = _newest(mem)
    best = owner = None  # (mtime, key, current alias) of the newest map; (key, current) of log's
    for key, current, aliases in mem.chats.each():
        mt = _mtime(mem.chats.dir + "/" + map_file(key))
        if best is None or mt > best[0]:
            best = (mt, key, current)
        if log is not None and owner is None:
            for a in aliases:
                if _file(key + ":" + a) == log:
                    owner = (key, current)
                    break
    if best is not None and best[0] >= t:
        owner = best[1:]
    if owner is None:
        return log, None
    sid = owner[0] + ":" + owner[1]
    return _file(sid), sid


def _file(sid):
    from .session import file_name

    try:
        return file_name(sid)
    except ValueError:  # an id no session can have
        return None


def _find(mem, session):
    """(file name, session id or None) of a session given by id or file name; without one,
    the session the next request goes to (_next); (None, None) when there is no such
    session."""
    from .session import is_log_name
    from .session.format import PEND

    if session is None:
        return _next(mem)
    if not isinstance(session, str):
        return None, None
    if is_log_name(session):
        f, sid = session, None
        for s in mem.chats.ids():  # streamed: stop at the first that names it
            if _file(s) == f:
                sid = s
                break
    else:
        f, sid = _file(session), session
        if f is None:
            return None, None
    d = mem.sessions.dir + "/"
    if fsutil.exists(d + f) or fsutil.exists(d + f + PEND) or (sid is not None and mem.chats.names(sid)):
        return f, sid
    return None, None


def _unknown(m, session, rows):
    # A session `_find` did not find, said: ValueError with `rows`, else printed; None
    why = ("no session %r in %s (inspect.sessions() lists them)" % (session, m.layout.root)
           if session is not None else "no sessions in %s yet" % m.layout.root)
    if rows:
        raise ValueError(why)
    print(why)
    return None


def history(session=None, n=10, root=None, rows=False, mem=None):
    """The last `n` messages (0: all) of a session, given by id or file name; without one,
    of the session the next request goes to (the chat maps say which). An unknown session is reported (ValueError with `rows=True`)."""
    m = _mem(root, mem)
    f, sid = _find(m, session)
    if f is None:
        return _unknown(m, session, rows)
    msgs = m.sessions.tail(None, n, backend="", file=f) if n else m.sessions.messages(
        None, backend="", file=f, tokens=0)
    out = [messages.display(x) for x in msgs]
    shown = [dict(r, text=messages.cell(r["text"])) for r in out]
    return _out(out, shown, ("role", "text"), rows, "%s (%s): last %d" % (sid or "?", f, len(out)))


def items(root=None, limit=None, rows=False, mem=None):
    """Active long-term items, best first (none without a store), with where each came from
    ("from": session and date, or "unknown") and its expiry day ("expires", "" for none)."""
    store = _mem(root, mem).store
    out = []
    for it in (store.list() if store is not None else ()):
        from . import dates, provenance  # (FULL only: a LITE board has no store, nor these)

        if limit is not None and len(out) >= limit:
            break
        exp = it["expires_at"]
        out.append({"id": it["id"], "access": it["access_count"], "labels": ",".join(it["summary_labels"]),
                    "from": provenance.origin_text(it), "expires": dates.day(exp - 1) if exp else "",
                    "content": it["content"]})
    shown = [dict(r, content=messages.cell(r["content"])) for r in out]
    return _out(out, shown, ("id", "access", "labels", "from", "expires", "content"), rows)


def why(memory_id, root=None, rows=False, mem=None):
    """Where a long-term item came from (Store.why: the request that stored it, with its user
    message while that is on flash, and the updates since); `rows=True`: that report."""
    m = _mem(root, mem)
    if m.store is None:
        if rows:
            return None
        print("no long-term store: %s is a LITE data root" % m.layout.root)
        return None
    report = m.store.why(memory_id, m.layout.sessions)
    if rows:
        return report
    from .memory_text import why as words  # (FULL only)

    print(text.shown(words(report, memory_id), True))
    return None


def recall(query, limit=8, root=None, rows=False, mem=None):
    """The long-term items most relevant to `query` (text), best first, with their scores
    (read only: no recall is counted)."""
    store = _mem(root, mem).store
    out = []
    for it in (store.matches(query, limit) if store is not None else ()):
        out.append({"id": it["id"], "score": it["score"], "labels": ",".join(it["summary_labels"]),
                    "content": it["content"]})
    shown = [dict(r, content=messages.cell(r["content"])) for r in out]
    return _out(out, shown, ("id", "score", "labels", "content"), rows)


def search(query, limit=5, session=None, root=None, rows=False, mem=None):
    """The records of the session history (archives included) that best match `query`, best
    first: the whole data root, or one session's (`session`: its id or file name)."""
    m = _mem(root, mem)
    if session is not None and _find(m, session)[0] is None:
        return _unknown(m, session, rows)
    out = []
    for h in m.search(query, limit, session=session):
        out.append({"session": h["session"], "role": h["role"], "archived": h["archived"],
                    "score": h["score"], "text": h["text"]})
    from .session.hits import excerpt, query_words  # (the part of a long text about the query)

    words = query_words(query)
    shown = [dict(r, text=messages.cell(excerpt(r["text"], words, 60), 60)) for r in out]
    return _out(out, shown, ("session", "role", "archived", "score", "text"), rows)


def labels(root=None, rows=False, mem=None):
    """The label catalog (none without a store)."""
    store = _mem(root, mem).store
    out = list(store.labels()) if store is not None else []
    return _out(out, out, ("summary_id", "label", "ref_count"), rows)


def profile(root=None, rows=False, mem=None):
    """The profile documents (the table shows their first line)."""
    prof = _mem(root, mem).profile
    out = []
    for name in ("user", "soul", "identity"):
        body = prof.read(name)
        out.append({"name": name, "bytes": len(body.encode()), "text": body})
    shown = [dict(r, text=messages.cell(r["text"])) for r in out]
    return _out(out, shown, ("name", "bytes", "text"), rows)


def stats(root=None, rows=False, mem=None):
    """Every session with its bytes, records and the tokens of its whole history (printed
    as read), then bytes per layer, records, and the tokens each layer adds to a request
    (estimates; for sessions, the largest session's history within the token budget).
    `rows=True`: {"layers": [..], "sessions": [..]}."""
    from ._compat import dumps
    from .core import Request
    from .session.format import index_dir

    mem = _mem(root, mem)
    tot = [0, 0]  # records, most tokens

    def size(path):
        if not fsutil.is_dir(path):
            return max(fsutil.size(path), 0)
        # (a file's size from the folder's listing where it says: no lookup per name)
        return sum(n if n >= 0 and not is_dir else size(path + "/" + name)
                   for name, is_dir, n in ilistdir(path))

    def each():
        for r in mem.sessions.list():
            n = 0
            if r["bytes"] or r["pending"]:
                for kind, fmt, raw in mem.sessions.records(file=r["file"]):
                    n += text.estimate_tokens(raw.decode()) + 4
            tot[0] += r["records"]
            tot[1] = max(tot[1], n)
            yield {"id": r["id"] or ("?" if not rows else None), "file": r["file"],
                   "bytes": r["bytes"], "records": r["records"], "tokens": n}

    cols = ("id", "file", "bytes", "records", "tokens")
    if rows:
        sess = list(each())
    else:
        _stream(each(), cols, (36, 44, 7, 7, 7), "sessions (tokens: whole history)")
    provs = {p.name: p for p in mem.providers()}
    req = Request("")

    def tokens(name):
        return text.estimate_tokens(provs[name].collect(req) or "")

    budget = mem.sessions.history_tokens
    profile_bytes = sum(size(mem.profile.path(n)) for n in ("user", "soul", "identity"))
    layers = [
        {"layer": "sessions", "bytes": size(mem.layout.sessions) + size(index_dir(mem.layout.sessions)),
         "records": tot[0], "tokens": min(tot[1], budget) if budget else tot[1]},
        {"layer": "profile", "bytes": profile_bytes, "records": 3, "tokens": tokens("Editable Profile Memory")},
        {"layer": "long-term", "bytes": size(mem.layout.memory) - profile_bytes,
         "records": mem.store.count() if mem.store is not None else 0, "tokens": tokens("Long-term Memory"),
         "capacity": mem.store.max_active if mem.store is not None else 0},
        {"layer": "skills", "bytes": 0, "records": 0, "tokens": tokens("Memory Skills")},
        {"layer": "tool definitions", "bytes": 0, "records": len(mem.tools()),
         "tokens": text.estimate_tokens(dumps(_defs(mem.tools())))},
    ]
    if rows:
        return {"layers": layers, "sessions": sess}
    table(layers, ("layer", "bytes", "records", "capacity", "tokens"), "per layer (tokens per request)")
    return None


def _defs(tools):
    # The tool definitions as an OpenAI-style request carries them (for their tokens).
    out = []
    for t in tools:
        schema = t.schema if not isinstance(t.schema, str) else jsonraw.json_value(t.schema)
        out.append({"type": "function", "function": {"name": t.name, "description": t.description,
                                                     "parameters": schema}})
    return out


def context(session=None, system_prompt="", backend="openai", root=None, rows=False, mem=None,
            message=""):
    """What one request on a session (id or file name; default: the one the next request
    goes to) would carry: the system prompt (`system_prompt` first, then each memory section:
    with `message`, the memories automatic recall would add for it), the history after the
    token budget, and the tool definitions, with estimated tokens per layer. `rows=True`:
    {"session", "system", "messages", "tools", "layers", "total", "recalled"} ("recalled": the
    ids of those memories)."""
    from ._compat import dumps
    from .core import MESSAGES, Request, system_text
    from .wire import convert, dump

    m = _mem(root, mem)
    f, sid = _find(m, session)
    if session is not None and f is None:
        return _unknown(m, session, rows)
    parts = (sid or "").split(":")
    channel, chat = (parts[1], parts[2]) if len(parts) >= 4 and parts[0] == "chat" else (None, None)
    req = Request(message or "", sid, channel, chat)
    layers = [{"layer": "your system prompt", "tokens": text.estimate_tokens(system_prompt or "")}]
    sections = []
    msgs = []
    for p in m.providers():
        if p.kind == MESSAGES:
            if f is not None:
                h = m.sessions.history(sid, backend, file=None if sid else f)
                msgs = h.messages(backend)
            wire = convert(msgs, backend)
            layers.append({"layer": p.name, "tokens": sum(text.estimate_tokens(dump(w)) for w in wire),
                           "messages": len(wire)})
            continue
        content = p.collect(req)
        if content:
            sections.append((p.name, content))
            layers.append({"layer": p.name, "tokens": text.estimate_tokens(content)})
    defs = _defs(m.tools())
    layers.append({"layer": "tool definitions", "tokens": text.estimate_tokens(dumps(defs)),
                   "messages": len(defs)})
    system = system_text(system_prompt, sections, channel, chat)
    recalled = []
    if message and m.store is not None:
        from .providers import recalled_lines

        recalled = [i for i, _ in recalled_lines(m.store, message, m.auto_recall)]
    out = {"session": sid or f, "system": system, "messages": msgs, "tools": defs,
           "layers": layers, "total": sum(r["tokens"] for r in layers), "recalled": recalled}
    if rows:
        return out
    print("== system prompt ==\n%s" % text.shown(system, True))
    table([dict(r, text=messages.cell(r["text"], 100)) for r in (messages.display(x) for x in msgs)],
          ("role", "text"), "messages (%s, after the token budget)" % (sid or f or "no session"))
    print("\n== tools ==\n%s" % ", ".join(d["function"]["name"] for d in defs))
    table(layers + [{"layer": "total", "tokens": out["total"]}], ("layer", "tokens", "messages"),
          "estimated tokens per layer")
    return None
