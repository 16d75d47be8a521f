"""Export a data root to one versioned JSON-lines bundle, and import it back.

Bundle (UTF-8, one JSON object per line):

    {"type":"header","format":"claw-memory-bundle","version":2,"library":"0.1.0","exported_at":1714000000}
    {"type":"profile","name":"user","content":"..."}                 (x3)
    {"type":"memory_md","content":"..."}
    {"type":"item", <ESP-Claw item fields>[, "expires_at"]}           (active items)
    {"type":"chat_map","chat_key":"...","current_alias":"...","sessions":[...]}
    {"type":"session","file":"s_..._hash.log","blocked":false,"records":N}
    {"type":"record","file":"s_..._hash.log","kind":1,"backend":1,"message":"<record JSON text>"}
    {"type":"segment","file":"s_..._hash.log","made_at":1714000000,"records":N}  (its archive,
    {"type":"record",...,"backend":0,...}                             oldest segment first)
    {"type":"end","lines":N}                                         (N lines between)

A record belongs to the last session or segment line of its file before it. Version 1 (no
segment lines) is read too.

Everything is read and written through the claw_memory package itself (no second
implementation of any format). Import validates the whole bundle before it writes anything,
builds the data root in a staging folder beside the target, and moves it into place only
when every part succeeded: it never half-imports.
"""

import json
import os
import shutil
import sys
import tempfile
import time

import claw_memory
from claw_memory import chats as chats_mod
from claw_memory import fsutil
from claw_memory import item as itm
from claw_memory import profile as profile_mod
from claw_memory import session as session_mod
from claw_memory import text
from claw_memory.messages import classify
from claw_memory.profile import NAMES

from . import guard
from .ui import CliError, Progress, json_safe

FORMAT = "claw-memory-bundle"
VERSION = 2
_READS = (1, 2)  # the versions import reads
_MAX_LINE = 1 << 20


def readonly_copy(root):
    """A temporary copy of a data root: reading through the package may repair files, and
    an export must not change its source."""
    tmp = tempfile.mkdtemp(prefix="claw-export-")
    for name in guard.TOPS:  # (the text indexes too: a search of the copy need not make them)
        src = os.path.join(root, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(tmp, name), ignore=_not_utf8)
    return tmp


def _not_utf8(folder, names):
    # Names that are not UTF-8 (CPython hands them over with surrogates) are no file of a
    # data root: the library and ESP-Claw write ASCII names only.
    out = []
    for n in names:
        try:
            n.encode("utf-8")
        except UnicodeError:
            out.append(n)
    return out


def export(copy, out_path, progress=True):
    """Write the bundle of the data root `copy` (a readonly_copy: reading may repair files)
    to `out_path` ("-": stdout), line by line as it is read (a root with thousands of
    sessions is never held whole); returns counts."""
    counts = {"items": 0, "sessions": 0, "records": 0, "chat_maps": 0, "segments": 0}
    if out_path == "-":  # stdout (UTF-8 whatever the locale), maybe a terminal: json_safe
        buf = getattr(sys.stdout, "buffer", None)

        def put(line):
            line = json_safe(line)
            if buf is not None:
                buf.write(line.encode("utf-8"))
            else:
                sys.stdout.write(line)

        _export_lines(copy, counts, progress, put)
        (buf or sys.stdout).flush()
        return counts
    # A fresh temp file (O_EXCL: never a file or a link already there) beside the bundle
    fd, tmp_out = tempfile.mkstemp(prefix=os.path.basename(out_path) + ".",
                                   suffix=".tmp", dir=os.path.dirname(out_path) or ".")
    try:
        with open(fd, "w", encoding="utf-8") as f:
            _export_lines(copy, counts, progress, f.write)
        os.replace(tmp_out, out_path)
    except BaseException:
        if os.path.exists(tmp_out):
            os.remove(tmp_out)  # no half bundle left beside the user's files
        raise
    return counts


def _export_lines(copy, counts, progress, put):
    n = [0]

    def line(obj, body=True):
        put(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        n[0] += body

    line({"type": "header", "format": FORMAT, "version": VERSION,
          "library": claw_memory.__version__, "exported_at": int(time.time())}, False)
    # LITE when the root has no store: a FULL open would render MEMORY.md from an empty
    # store over the user's own document.
    lite = not os.path.exists(os.path.join(copy, "memory", "memory_records.jsonl"))
    mem = claw_memory.open(copy, "lite" if lite else "full", extract=False, create=False)
    if not lite:
        mem.store.compact()  # fold pending recall counts into the items
    for name in NAMES:
        line({"type": "profile", "name": name, "content": mem.profile.read(name)})
    md = os.path.join(copy, "memory", "MEMORY.md")
    if os.path.exists(md):
        with open(md, encoding="utf-8", errors="replace") as f:
            line({"type": "memory_md", "content": f.read()})
    for it in mem.store.list() if not lite else ():
        row = {k: it[k] for k in ("id", "source", "content", "tags", "keywords", "created_at",
                                  "updated_at", "access_count", "deleted", "summary_ids")}
        if it["expires_at"]:  # (provenance stays behind: an imported item's origin is unknown)
            row["expires_at"] = it["expires_at"]
        row["type"] = "item"
        line(row)
        counts["items"] += 1
    # (read as the package reads them, as ESP-Claw's cJSON does: a BOM, a stray tail; each
    # map's state() finishes a /session delete a power cut interrupted, in this copy: a
    # deleted session is not exported)
    for key in sorted((m[0] for m in mem.chats.each()), key=chats_mod.map_file):
        state = mem.chats.state(key)
        if key and state:
            line({"type": "chat_map", "chat_key": key, "current_alias": state[0], "sessions": state[1]})
            counts["chat_maps"] += 1
    # A map that names no chat key (damaged: the key is lost with it) cannot be exported:
    # its sessions go without their chat, which the caller says.
    maps = sum(1 for n in (os.listdir(mem.chats.dir) if os.path.isdir(mem.chats.dir) else ())
               if n.endswith(".json"))
    if maps > counts["chat_maps"]:
        counts["chat_maps_unreadable"] = maps - counts["chat_maps"]
    files = sorted(r["file"] for r in mem.sessions.list())
    bar = Progress(len(files), "export", status=None) if progress else None
    for f in files:
        k = sum(1 for _ in mem.sessions.records(file=f))
        line({"type": "session", "file": f, "blocked": mem.sessions.blocked(None, file=f),
              "records": k})
        for kind, fmt, raw in mem.sessions.records(file=f):
            line({"type": "record", "file": f, "kind": kind, "backend": fmt,
                  "message": raw.decode("utf-8")})
        for t, recs in _segments(mem, f):
            line({"type": "segment", "file": f, "made_at": t, "records": len(recs)})
            for kind, raw in recs:  # (a segment keeps no backend: 0)
                line({"type": "record", "file": f, "kind": kind, "backend": 0,
                      "message": raw.decode("utf-8")})
            counts["segments"] += 1
            counts["records"] += len(recs)
        counts["sessions"] += 1
        counts["records"] += k
        if bar:
            bar.step(f)
    if bar:
        bar.done()
    mem.close()
    line({"type": "end", "lines": n[0]}, False)


def _segments(mem, f):
    # (unix time, [(type, record JSON bytes)]) of each live archive segment of log file `f`,
    # oldest first, read as search and page() read them (through their text indexes)
    from claw_memory.jsonraw import json_value
    from claw_memory.session import archive as arc
    from claw_memory.session import indexer

    d, limit = mem.sessions.dir, mem.sessions.max_record_bytes
    times = {e[0]: e[2] for e in arc.read(d)}
    a = mem.sessions.archived([f]).get(f, ())
    for i in range(0, len(a), 2):
        path = arc.seg_path(d, f, a[i])
        if not os.path.isfile(path):
            continue  # listed, but its file is gone: search and page() pass it by too
        recs = []
        with open(path, "rb") as sf:
            for off, ln, kind in indexer.records(path, limit):
                if ln > limit + 1:
                    continue  # over the size bound: left out, as records() leaves a log's
                sf.seek(off)
                raw = sf.read(ln)
                if len(raw) == ln and raw[-1:] == b"\n" and classify(json_value(raw))[0]:
                    recs.append((kind, raw[:-1]))
        yield times.get(a[i], 0), recs


def _bad(n, why):
    raise CliError("not a valid bundle: line %d: %s" % (n, why))


# The fields of each line type; any other field is refused (a bundle is checked whole, as the
# tools check their arguments, before anything is written).
_KEYS = {
    "header": ("format", "version", "library", "exported_at"),
    "profile": ("name", "content"),
    "memory_md": ("content",),
    "item": itm.FIELDS,
    "chat_map": ("chat_key", "current_alias", "sessions"),
    "session": ("file", "blocked", "records"),
    "segment": ("file", "made_at", "records"),
    "record": ("file", "kind", "backend", "message"),
    "end": ("lines",),
}
_KEY_MAX = 512  # bytes of a chat key: a session id (it and its alias) is at most 512


def _fields(n, obj):
    kind = obj["type"]
    allowed = _KEYS.get(kind)
    if allowed is None:
        _bad(n, "unknown line type %s" % text.one_line(kind, 40))
    for k in obj:
        if k != "type" and k not in allowed:
            _bad(n, "%s: unknown field %s" % (kind, text.one_line(k, 40)))


def _chat_key(key):
    # Bounded, in the shape chats.chat_key makes: it names the chat's map file and becomes
    # the session ids. Any character a chat id may hold is kept (the library takes chat ids
    # as they come and renders them as data wherever they are shown: the system prompt,
    # inspect, the CLI), so a bundle restores every chat its export holds.
    return (isinstance(key, str) and 0 < len(text.to_bytes(key)) <= _KEY_MAX
            and key.startswith(("chat:", "agent:")))


def read(path):
    """Parse and validate a whole bundle; returns the parsed parts. Raises CliError."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise CliError("cannot read %s: %s" % (path, e.strerror or e))
    objs = []
    with f:
        for n, raw in enumerate(f, 1):
            if len(raw) > _MAX_LINE:
                _bad(n, "line longer than 1 MiB")
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                _bad(n, "not JSON")
            if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                _bad(n, "not an object with a type")
            _fields(n, obj)
            objs.append(obj)
    if not objs or objs[0].get("type") != "header" or objs[0].get("format") != FORMAT:
        raise CliError("not a claw-memory bundle: the first line is not its header")
    if objs[0].get("version") not in _READS:
        raise CliError("bundle version %r is not supported (this tool reads versions %s)"
                       % (objs[0].get("version"), " and ".join(str(v) for v in _READS)))
    end = objs[-1]
    if end.get("type") != "end" or end.get("lines") != len(objs) - 2:
        raise CliError("the bundle is truncated or damaged: its end line is missing or its "
                       "line count does not match")
    parts = {"profile": {}, "memory_md": None, "items": [], "chat_maps": [], "sessions": {}}
    last = {}  # file name: the session or segment its next records belong to
    for n, obj in enumerate(objs[1:-1], 2):
        kind = obj["type"]
        if kind == "profile":
            name = obj.get("name")
            if not isinstance(name, str) or name not in NAMES or not isinstance(obj.get("content"), str):
                _bad(n, "profile needs a name (user, soul, identity) and a content")
            if len(obj["content"].encode("utf-8", "replace")) > profile_mod.MAX_BYTES:
                _bad(n, "profile %s is larger than %d bytes" % (name, profile_mod.MAX_BYTES))
            parts["profile"][obj["name"]] = obj["content"]
        elif kind == "memory_md":
            if not isinstance(obj.get("content"), str):
                _bad(n, "memory_md needs a content")
            parts["memory_md"] = obj["content"]
        elif kind == "item":
            try:
                itm.check(obj, ("type",))
            except ValueError as e:
                _bad(n, "item: %s" % e)
            if any(it["id"] == obj["id"] for it in parts["items"]):
                _bad(n, "item %s appears twice" % obj["id"])
            parts["items"].append(obj)
        elif kind == "chat_map":
            aliases = obj.get("sessions")
            if (not _chat_key(obj.get("chat_key")) or not isinstance(aliases, list) or not aliases
                    or not all(chats_mod.valid_alias(a) for a in aliases)
                    or obj.get("current_alias") not in aliases or len(aliases) > chats_mod.MAX_SESSIONS):
                _bad(n, "chat_map is not valid")
            if len(set(aliases)) != len(aliases):
                _bad(n, "chat_map names a session twice")
            if any(m["chat_key"] == obj["chat_key"] for m in parts["chat_maps"]):
                _bad(n, "chat_map for %s appears twice" % obj["chat_key"])
            parts["chat_maps"].append(obj)
        elif kind == "session":
            fname = obj.get("file")
            if not isinstance(fname, str) or not session_mod.is_log_name(fname):
                _bad(n, "session needs a session file name")
            if fname in parts["sessions"]:
                _bad(n, "session %s appears twice" % fname)
            if type(obj.get("blocked", False)) is not bool:
                _bad(n, "session: field blocked: true or false")
            parts["sessions"][fname] = last[fname] = {
                "blocked": obj.get("blocked") is True, "records": [], "count": obj.get("records"),
                "archive": []}
        elif kind == "segment":
            fname = obj.get("file")
            s = parts["sessions"].get(fname) if isinstance(fname, str) else None
            if s is None:
                _bad(n, "segment before its session line")
            t = obj.get("made_at")
            if type(t) is not int or not 0 <= t < 1 << 32:
                _bad(n, "segment: field made_at: a whole number of seconds")
            last[fname] = {"made_at": t, "records": [], "count": obj.get("records")}
            s["archive"].append(last[fname])
        elif kind == "record":
            fname = obj.get("file")
            s = last.get(fname) if isinstance(fname, str) else None
            if s is None:
                _bad(n, "record before its session line")
            k, b, msg = obj.get("kind"), obj.get("backend"), obj.get("message")
            if (type(k) is not int or type(b) is not int or k not in (1, 2, 3, 4) or b not in (0, 1, 2, 3)
                    or not isinstance(msg, str)):
                _bad(n, "record needs kind 1..4, backend 0..3 and a message")
            try:
                val = json.loads(msg)
            except ValueError:
                _bad(n, "record message is not JSON")
            if not classify(val)[0]:
                _bad(n, "record message is not a chat record")
            s["records"].append((k, b, msg))
        else:
            _bad(n, "%s line inside the bundle" % kind)
    for fname, s in parts["sessions"].items():
        for what, c in [("session", s)] + [("archive segment", a) for a in s["archive"]]:
            if c["count"] != len(c["records"]):
                raise CliError("not a valid bundle: %s %s announces %r records and has %d"
                               % (what, fname, c["count"], len(c["records"])))
    return parts


def _swap(target, staging):
    """Replace the data root's sessions/, memory/ and search/ by the staging folder's,
    all or nothing: the old ones go aside first, and a failure puts them back. Only those
    folders are replaced, as on a board: anything else in `target` stays. (The text indexes
    are derived, and hold the words of the sessions they index: the old ones go too.)"""
    names = guard.TOPS
    for name in names:
        if os.path.exists(os.path.join(target, name + ".replaced")):
            raise CliError("%s.replaced is left by an interrupted import (it may hold the old data): "
                           "move it away first" % os.path.join(target, name))
    aside = []
    try:
        for name in names:
            dst = os.path.join(target, name)
            if os.path.exists(dst):
                os.rename(dst, dst + ".replaced")
                aside.append(name)
        moved = []
        try:
            for name in names:
                if os.path.exists(os.path.join(staging, name)):
                    os.rename(os.path.join(staging, name), os.path.join(target, name))
                    moved.append(name)
        except BaseException:
            for name in moved:
                os.rename(os.path.join(target, name), os.path.join(staging, name))
            raise
    except BaseException:
        for name in aside:
            os.rename(os.path.join(target, name + ".replaced"), os.path.join(target, name))
        raise
    for name in aside:
        shutil.rmtree(os.path.join(target, name + ".replaced"), ignore_errors=True)


def import_(path, target, replace=False, progress=True):
    """Validate the bundle, build a data root from it beside `target`, move it into place."""
    parts = read(path)
    target = os.path.abspath(target)
    if os.path.exists(target) and not os.path.isdir(target):
        raise CliError("%s is a file: import into a new folder" % target)
    swap = os.path.exists(target) and os.listdir(target)
    if swap and not replace:
        raise CliError("%s is not empty: import into a new folder, or pass --replace to replace "
                       "the data root there" % target)
    if swap:
        guard.removable(target, *guard.listing(target), "import --replace")
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".claw-import-", dir=parent)
    try:
        mem = claw_memory.open(staging, extract=False)
        for name, content in parts["profile"].items():
            if content.strip():
                mem.profile.write(name, content)
        if parts["items"]:
            mem.store.restore(parts["items"])
        elif parts["memory_md"] is not None:
            fsutil.replace(mem.md_path(), parts["memory_md"].encode())
        for m in parts["chat_maps"]:
            mem.chats.save(m["chat_key"], m["current_alias"], m["sessions"])
        bar = Progress(len(parts["sessions"]), "import") if progress else None
        for fname, s in parts["sessions"].items():
            try:
                mem.sessions.restore(fname, s["records"], s["blocked"],
                                     [(a["made_at"], a["records"]) for a in s["archive"]])
            except ValueError as e:
                raise CliError("not a valid bundle: session %s: %s" % (fname, e))
            if bar:
                bar.step(fname)
        if bar:
            bar.done()
        mem.close()
        if swap:
            _swap(target, staging)
            os.rmdir(staging)
        else:
            if os.path.exists(target):
                os.rmdir(target)  # empty
            os.rename(staging, target)
        staging = None
    finally:
        if staging:
            shutil.rmtree(staging, ignore_errors=True)
    sess = parts["sessions"].values()
    return {"items": len(parts["items"]), "sessions": len(parts["sessions"]),
            "records": sum(len(s["records"]) + sum(len(a["records"]) for a in s["archive"])
                           for s in sess),
            "chat_maps": len(parts["chat_maps"]), "segments": sum(len(s["archive"]) for s in sess)}
