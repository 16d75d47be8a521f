# A faithful port of ESP-Claw's C `claw_memory` write and read patterns, as the benchmark's
# baseline (tools/bench.py). MIT license
#
# Not our library and not a reimplementation of its behaviour: this module does, file
# operation by file operation, what ESP-Claw's C code does (§6.1-6.4 and §7.3-7.12 in
# docs/DESIGN.md's appendix; read against claw_memory_session.c, claw_memory.c and
# claw_memory_storage.c of ESP-Claw's components/claw_modules/claw_memory), so that the flash
# simulator counts what the real system would program and erase:
#
# - persist: validate the .log/.idx pair (the whole .idx read), one open of each for append
#   per batch, every record appended (one write per record, one per index entry), both closed;
#   after a completed turn, the compaction check of §6.4 (in place, r+b, then truncate);
# - store/update/forget: every item loaded, one append to the records, the whole index and
#   MEMORY.md rewritten, one digest append, then the compaction check (changes since boot >= 5
#   or records >= 32768 bytes; the change counter lives in RAM, as in C); update is a store
#   of the replacement plus a forget, each with its own check, plus a final check;
# - recall: one digest append (own open and close) per returned item;
# - compaction: recall deltas folded from the digest, duplicates merged, 128-item cap, index
#   rebuilt with stable ids, records/index/MEMORY.md rewritten whole, digest line.
#
# MicroPython files have no truncate(): the caller passes `truncate(path, size)`. The default
# rewrites the kept prefix through a temp file (what a MicroPython port would have to do); the
# benchmark passes a model instead (see `model_truncate`). Everything that touches a file goes
# through `self.open`, so a test can count opens.
#
# Text rules are ESP-Claw's (labels cut to 8 characters, byte-cut fields, its key and
# semantic-match rules) for ASCII text; the CJK punctuation list of the key normaliser is
# left out (the workloads are ASCII).

import json
import os
import struct

LIMIT = 153600  # CLAW_MEMORY_SESSION_SIZE_LIMIT
COMPACT_CHANGES = 5  # CLAW_MEMORY_COMPACT_CHANGE_THRESHOLD
COMPACT_SIZE = 32768  # CLAW_MEMORY_COMPACT_SIZE_THRESHOLD
MAX_ACTIVE = 128
RECALL_LIMIT = 8
_MAGIC = 0x58444843
_HEADER = struct.pack("<IHH", _MAGIC, 1, 10)
_USER, _FINAL, _CALL, _RESULT = 1, 2, 3, 4
BLOCK_TEXT = "Session history is still too large after compaction."
_SEPS = ",;/|"
_LINE_BUF = 1024  # records line reader (fgets)
_DIGEST_BUF = 256  # digest line reader


def dumps(obj):
    # cJSON_PrintUnformatted: no whitespace, non-ASCII characters written raw (only '"', '\\'
    # and control characters escaped). MicroPython's json writes them raw and has no
    # ensure_ascii.
    try:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except TypeError:
        return json.dumps(obj, separators=(",", ":"))


def _size(path):
    try:
        return os.stat(path)[6]
    except OSError:
        return -1


def _exists(path):
    return _size(path) >= 0


def _makedirs(path):
    # ensure_parent_dir / ensure_dir_recursive: stat, mkdir what is missing.
    cur = ""
    for part in path.strip("/").split("/"):
        cur += "/" + part
        if not _exists(cur):
            try:
                os.mkdir(cur)
            except OSError:
                pass


def fnv1a32(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def file_name(session_id):
    """`s_<safe>_<fnv1a32>.log` (§2.2)."""
    raw = session_id.encode()
    safe = bytes(b if (48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b in (45, 95)) else 95
                 for b in raw[:47])[:24]
    return "s_%s_%08x.log" % (safe.decode() or "default", fnv1a32(raw))


def rewrite_prefix(path, size, open_=open):
    """Keep the first `size` bytes of `path` (a truncate through a temp file and rename)."""
    tmp = path + ".trunc"
    with open_(path, "rb") as src, open_(tmp, "wb") as dst:
        left = size
        while left:
            chunk = src.read(min(left, 4096))
            if not chunk:
                break
            dst.write(chunk)
            left -= len(chunk)
    try:
        os.remove(path)  # FAT cannot rename over a file
    except OSError:
        pass
    os.rename(tmp, path)


def model_truncate(dev):
    """A truncate for the simulated flash `dev` that costs what ftruncate costs the C code:
    the kept prefix is rewritten uncounted (MicroPython has no truncate); on LittleFS that is
    all (lfs_file_truncate's flush and commit already happened when the in-place rewrite
    closed the file), on FAT one FAT-sector write when clusters are freed."""
    try:
        cluster = os.statvfs(dev.path)[0]
    except OSError:
        cluster = dev.block_size

    def truncate(path, size):
        old = _size(path)
        with dev.uncounted():
            rewrite_prefix(path, size)
        if dev.kind == "fat" and (old + cluster - 1) // cluster > (size + cluster - 1) // cluster:
            dev.charge(erases=1 if dev.erase_on_write else 0, progs=1, nbytes=dev.block_size)

    return truncate


# -- sessions (§6) -------------------------------------------------------------------------


class Invalid(Exception):
    pass


class EspClawSessions:
    """ESP-Claw's session history (line A), one file operation for each of the C code's."""

    def __init__(self, directory, backend_format=1, limit=LIMIT, open_=open, truncate=None,
                 max_message_chars=4096):
        self.dir = directory
        self.fmt = backend_format
        self.limit = limit
        self.open = open_
        self.truncate = truncate or (lambda p, n: rewrite_prefix(p, n, open_))
        self.max_chars = max_message_chars
        self.compactions = 0
        self.blocked_sessions = 0

    def path(self, session_id):
        return self.dir + "/" + file_name(session_id)

    # session_history_validate_pair: the .idx read whole (one fread), the .log stat-ed.
    def _validate(self, log, idx):
        try:
            f = self.open(idx, "rb")
        except OSError:
            return None
        with f:
            head = f.read(8)
            body = f.read()
        if len(head) != 8 or head != _HEADER or len(body) % 10:
            raise Invalid("bad index")
        n = len(body) // 10
        for i in range(n):
            if body[i * 10 + 8] not in (1, 2, 3, 4) or body[i * 10 + 9] > 2:
                raise Invalid("bad entry")
        size = _size(log)
        if size < 0:
            return None
        if n == 0 and size > 0:
            raise Invalid("data without entries")
        for i in range(n):
            off, ln = struct.unpack_from("<II", body, i * 10)
            if ln == 0 or off > size or ln > size - off:
                raise Invalid("entry past the data")
        return body

    def _recreate(self, log, idx):
        with self.open(log, "wb"):
            pass
        with self.open(idx, "wb") as f:
            f.write(_HEADER)

    def _pair(self, log, idx):
        try:
            ents = self._validate(log, idx)
        except Invalid:
            ents = None
        if ents is None:
            self._recreate(log, idx)
            ents = b""
        return ents

    def persist(self, session_id, records, turn_completed=False):
        """claw_memory_persist_context_callback: returns the block text when this batch
        blocked the session, else None."""
        if not session_id or not records:
            raise ValueError("empty batch")
        for t, mj, tx in records:
            if t not in (1, 2, 3, 4) or not (mj or tx):
                raise ValueError("bad record")
        log = self.path(session_id)
        idx = log + ".idx"
        if _exists(log + ".blocked"):
            raise OSError(22, "session blocked")
        _makedirs(self.dir)
        self._pair(log, idx)
        with self.open(log, "ab") as df, self.open(idx, "ab") as xf:
            ents = []
            for t, mj, tx in records:
                if not mj:
                    if t not in (_USER, _FINAL):
                        raise ValueError("text record of a tool type")
                    mj = dumps({"role": "user" if t == _USER else "assistant",
                                "content": tx[: self.max_chars]})
                line = mj.encode() if isinstance(mj, str) else mj
                off = df.seek(0, 2)
                df.write(line + b"\n")
                ents.append(struct.pack("<IIBB", off, len(line) + 1, t, self.fmt))
            # The C code writes each entry after its record. ESP-IDF's FatFs keeps a sector
            # buffer per open file; MicroPython's FatFs shares one (FF_FS_TINY), so writes
            # alternating between two files would each flush a sector here that ESP-IDF
            # never writes. Issuing each file's writes together reaches the flash as ESP-IDF
            # does (littlefs has a cache per file: the order changes nothing there).
            for e in ents:
                xf.write(e)
        if turn_completed:
            return self._compact_if_needed(log, idx)
        return None

    # session_history_compact_if_needed and session_history_rewrite_compacted
    def _compact_if_needed(self, log, idx):
        if _size(log) <= self.limit:
            return None
        try:
            ents = self._validate(log, idx)
        except Invalid:
            ents = None
        if ents is None:
            self._recreate(log, idx)
            return None
        n = len(ents) // 10
        kinds = bytes(ents[i * 10 + 8] for i in range(n))
        keep = _keep_plan(kinds)
        planned = kept = 0
        for i in range(n):
            if keep[i]:
                planned += struct.unpack_from("<I", ents, i * 10 + 4)[0]
                kept += 1
        if planned > self.limit:
            with self.open(log + ".blocked", "wb"):
                pass
            self.blocked_sessions += 1
            return BLOCK_TEXT
        with self.open(log, "r+b") as df, self.open(idx, "r+b") as xf:
            out = bytearray(_HEADER)
            w = 0
            for i in range(n):
                if not keep[i]:
                    continue
                off, ln, t, fmt = struct.unpack_from("<IIBB", ents, i * 10)
                if off != w:
                    # session_history_read_record_text, then the write at the running offset
                    df.seek(off)
                    text = df.read(ln - 1)
                    if df.read(1) != b"\n":
                        raise OSError(22, "record without newline")
                    df.seek(w)
                    df.write(text + b"\n")
                out += struct.pack("<IIBB", w, ln, t, fmt)
                w += ln
            # The index goes out in one run for the reason given in persist(): on ESP-IDF its
            # writes collect in the index file's own buffer while the log is rewritten.
            xf.write(out)
        self.truncate(log, planned)
        self.truncate(idx, 8 + 10 * kept)
        self.compactions += 1
        return None

    def request_body(self, session_id, backend_format=None):
        """claw_memory_load_session_history_json: the history as one JSON array string."""
        log = self.path(session_id)
        idx = log + ".idx"
        have_log, have_idx = _exists(log), _exists(idx)
        if not have_log and not have_idx:
            return None
        if have_log != have_idx:
            self._recreate(log, idx)
            return None
        try:
            ents = self._validate(log, idx)
        except Invalid:
            ents = None
        if not ents:
            if ents is None:
                self._recreate(log, idx)
            return None
        cur = self.fmt if backend_format is None else backend_format
        out = []
        with self.open(log, "rb") as f:
            for i in range(len(ents) // 10):
                off, ln, t, fmt = struct.unpack_from("<IIBB", ents, i * 10)
                f.seek(off)
                obj = json.loads(f.read(ln - 1))
                if f.read(1) != b"\n":
                    raise OSError(22, "record without newline")
                if cur and fmt and cur != fmt:
                    if t in (_CALL, _RESULT):
                        continue
                    if t == _FINAL:
                        obj = _degrade(obj)
                        if obj is None:
                            continue
                if t == _RESULT and isinstance(obj, list):
                    out.extend(obj)
                else:
                    out.append(obj)
        return dumps(out)


def _keep_plan(kinds):
    """Which entries compaction keeps (§6.4): user and final always; every entry of an
    unfinished last turn; tool entries only in the newest completed turn that used tools."""
    n = len(kinds)
    starts = [i for i in range(n) if i == 0 or kinds[i] == _USER]
    ends = starts[1:] + [n]
    keep = bytearray(n)
    kept_tool_turn = -1
    for t in range(len(starts) - 1, -1, -1):
        seg = kinds[starts[t]:ends[t]]
        if _FINAL in seg and (_CALL in seg or _RESULT in seg):
            kept_tool_turn = t
            break
    for t in range(len(starts)):
        seg = kinds[starts[t]:ends[t]]
        last_open = t == len(starts) - 1 and _FINAL not in seg
        for i in range(starts[t], ends[t]):
            k = kinds[i]
            keep[i] = k in (_USER, _FINAL) or last_open or (t == kept_tool_turn and k in (_CALL, _RESULT))
    return keep


def _degrade(obj):
    c = obj.get("content") if isinstance(obj, dict) else None
    if isinstance(c, str):
        return obj
    if isinstance(c, list):
        txt = "".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text")
        if txt:
            return {"role": "assistant", "content": txt}
    return None


# -- long-term store (§7) -----------------------------------------------------------------


def _cut(s, n):
    # safe_copy into an n+1-byte buffer (ASCII workloads: a byte cut is a character cut).
    b = s.encode()
    return s if len(b) <= n else b[:n].decode()


def _tokens(csv):
    return [t.strip() for t in _split(csv) if t.strip()]


def _split(s):
    for sep in _SEPS[1:]:
        s = s.replace(sep, ",")
    return s.split(",")


def _join_fit(tokens, limit):
    out = ""
    for t in tokens:
        cand = t if not out else out + "," + t
        if len(cand.encode()) > limit:
            break
        out = cand
    return out


def normalize_metadata(content, tags, keywords):
    """claw_memory_normalize_item_metadata (§7.2)."""
    tags_l = []
    for t in _tokens(tags):
        if t not in tags_l and len(tags_l) < 3:
            tags_l.append(t)
    ntags = _join_fit(tags_l, 95)
    low_content, low_tags = content.lower(), ntags.lower()
    kws = []
    for t in _tokens(keywords):
        if len(kws) >= 3 or t in kws:
            continue
        if t in content or t in ntags or t.lower() in low_content or t.lower() in low_tags:
            kws.append(t)
    for t in _tokens(ntags):
        if len(kws) < 3 and t not in kws:
            kws.append(t)
    return ntags, _join_fit(kws, 127)


def labels(tags):
    """Summary labels: tag tokens cut to 39 bytes, then to 8 characters; first 3 distinct."""
    out = []
    for t in _split(tags):
        t = _cut(t, 39).strip()[:8]
        if t and t not in out:
            out.append(t)
            if len(out) == 3:
                break
    return out


def norm_key_text(content):
    # normalize_text_for_key for ASCII: lowercase alphanumerics only, at most 159 bytes.
    out = []
    for ch in content.lower():
        if "a" <= ch <= "z" or "0" <= ch <= "9" or ord(ch) > 127:
            out.append(ch)
    return _cut("".join(out), 159)


def item_key(item, now):
    k = _cut(norm_key_text(item["content"]), 36)
    return k or "memory-%d" % now


def semantic_match(existing, incoming):
    if existing["deleted"]:
        return False
    a, b = norm_key_text(existing["content"]), norm_key_text(incoming["content"])
    if not a or not b:
        return False
    if a == b:
        return True
    return len(a) >= 12 and len(b) >= 12 and (a in b or b in a)


def _item_line(it, with_labels=False):
    # claw_memory_append_record (key order of the C code); compaction adds summary_labels.
    d = {"id": it["id"], "source": it["source"], "content": it["content"], "tags": it["tags"],
         "keywords": it["keywords"], "created_at": it["created_at"],
         "updated_at": it["updated_at"], "access_count": it["access_count"],
         "deleted": bool(it["deleted"]), "summary_ids": it["summary_ids"]}
    if with_labels:
        d["summary_labels"] = []
    return dumps(d)


def _item_from(obj):
    if not isinstance(obj, dict):
        return None

    def s(k, n):
        v = obj.get(k)
        return _cut(v, n) if isinstance(v, str) else ""

    def num(k):
        v = obj.get(k)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0

    sids = obj.get("summary_ids")
    sids = [int(x) for x in sids[:3] if isinstance(x, int)] if isinstance(sids, list) else []
    return {"id": s("id", 39), "source": s("source", 15), "content": s("content", 255),
            "tags": s("tags", 95), "keywords": s("keywords", 127),
            "created_at": num("created_at"), "updated_at": num("updated_at"),
            "access_count": num("access_count") & 0xFFFF, "deleted": obj.get("deleted") is True,
            "summary_ids": sids}


def _priority(it):
    return (-it["access_count"], -it["updated_at"], it["id"])


def _fmt_time(ts):
    if not ts:
        return "-"
    t = __import__("time").gmtime(ts)
    return "%04d-%02d-%02d %02d:%02d:%02d" % t[:6]


class NotFound(Exception):
    pass


_DEFAULT_INDEX = '{"version":3,"next_summary_id":1,"last_compact_digest_size":0,"summaries":[],"keyword_index":{}}\n'
_DEFAULT_MD = "# Long-term Memory\n\n(empty - ESP-Claw will write memories here as it learns)\n"


class EspClawStore:
    """ESP-Claw's structured long-term memory (§7), file operation for file operation."""

    def __init__(self, directory, clock, open_=open, max_active=MAX_ACTIVE):
        self.dir = directory
        self.records = directory + "/memory_records.jsonl"
        self.index = directory + "/memory_index.json"
        self.digest = directory + "/memory_digest.log"
        self.md = directory + "/MEMORY.md"
        self.clock = clock
        self.open = open_
        self.max_active = max_active
        self.changes = 0  # write_changes_since_compact: RAM only, 0 after every boot
        self.seq = clock() % 10000
        self.compactions = 0

    # claw_memory_init: create what is missing (no compaction in line A's init).
    def init(self):
        _makedirs(self.dir)
        for path, text in ((self.records, ""), (self.index, _DEFAULT_INDEX), (self.digest, ""),
                           (self.md, _DEFAULT_MD)):
            if not _exists(path):
                self._write(path, text)
        return self

    # -- file helpers (read_file_dup, write_file_text, append_file_text) -------------------

    def _write(self, path, text):
        with self.open(path, "wb") as f:
            f.write(text)

    def _append(self, path, text):
        with self.open(path, "ab") as f:
            f.write(text)

    def _digest_line(self, action, mid, extra=None):
        self._append(self.digest, "%d\t%s\t%s%s\n" % (self.clock(), action, mid or "-",
                                                      "\t" + extra if extra else ""))

    # claw_memory_load_current_items: every line, the last line per id wins, first-seen order.
    def _load_items(self):
        items = []
        where = {}
        try:
            f = self.open(self.records, "rb")
        except OSError:
            return items
        with f:
            while True:
                line = f.readline(_LINE_BUF - 1)
                if not line:
                    break
                long_line = line[-1:] != b"\n" and len(line) == _LINE_BUF - 1
                while long_line and line[-1:] != b"\n":  # fgets splits it: both halves fail
                    line = f.readline(_LINE_BUF - 1)
                    if not line:
                        break
                if long_line:
                    continue
                line = line.strip(b"\r\n")
                if not line:
                    continue
                try:
                    it = _item_from(json.loads(line))
                except ValueError:
                    continue
                if it is None or not it["id"]:
                    continue
                i = where.get(it["id"])
                if i is None:
                    where[it["id"]] = len(items)
                    items.append(it)
                else:
                    items[i] = it
        return items

    # claw_memory_load_index: read whole, parse; missing -> default in RAM.
    def _load_index(self):
        try:
            f = self.open(self.index, "rb")
        except OSError:
            return json.loads(_DEFAULT_INDEX)
        with f:
            idx = json.loads(f.read())
        idx.setdefault("summaries", [])
        idx.setdefault("next_summary_id", 1)
        idx.setdefault("last_compact_digest_size", 0)
        idx.setdefault("keyword_index", {})
        idx["summaries"] = [{"summary_id": max(int(e.get("summary_id", 0)), 0), "label": e["label"],
                             "ref_count": max(int(e.get("ref_count", 0)), 0)}
                            for e in idx["summaries"] if isinstance(e, dict) and e.get("label")]
        return idx

    def _save_index(self, idx):
        self._write(self.index, dumps(idx))

    @staticmethod
    def _ensure(idx, label, preferred=0):
        for e in idx["summaries"]:
            if e["label"] == label:
                return e["summary_id"]
        nid = idx["next_summary_id"] if idx["next_summary_id"] > 0 else 1
        if preferred > 0 and not any(e["summary_id"] == preferred for e in idx["summaries"]):
            nid = preferred
        idx["summaries"].append({"summary_id": nid, "label": label, "ref_count": 0})
        if nid >= idx["next_summary_id"]:
            idx["next_summary_id"] = nid + 1
        return nid

    @staticmethod
    def _adjust(idx, it, delta):
        for sid in it["summary_ids"]:
            for e in idx["summaries"]:
                if e["summary_id"] == sid:
                    e["ref_count"] = max(e["ref_count"] + delta, 0)
                    break

    @staticmethod
    def _rebuild_keywords(idx, items):
        kw = {}
        for it in items:
            if it["deleted"] or not it["id"]:
                continue
            for t in _split(_cut(it["keywords"] or it["tags"], 159)):
                t = _cut(t, 47).strip()
                if t:
                    ids = kw.setdefault(t, [])
                    if it["id"] not in ids:
                        ids.append(it["id"])
        idx["keyword_index"] = kw

    @staticmethod
    def _labels_of(idx, it):
        out = []
        for sid in it["summary_ids"]:
            for e in idx["summaries"]:
                if e["summary_id"] == sid:
                    out.append(e["label"])
                    break
        return out

    # claw_memory_export_markdown_internal + write_file_text (1024 + 512 per item buffer)
    def _sync_markdown(self, items, idx):
        cap = 1024 + 512 * len(items)
        parts = ["# Long-term Memory\n\n"]
        if idx["summaries"]:
            parts.append("## Summary Labels\n\n")
            for e in idx["summaries"]:
                parts.append("- %s (refs=%d)\n" % (e["label"], e["ref_count"]))
            parts.append("\n")
        if not items:
            parts.append("(empty - Claw will write memories here as it learns)\n")
        else:
            parts.append("## Active Memories\n\n")
            n = sum(len(p) for p in parts)
            for it in sorted(items, key=_priority):
                if n + 64 >= cap:
                    break
                if it["deleted"]:
                    continue
                p = "- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                    it["id"], it["content"], _fmt_time(it["updated_at"]), it["access_count"],
                    dumps(self._labels_of(idx, it)))
                parts.append(p)
                n += len(p)
        self._write(self.md, "".join(parts)[: cap - 1])

    def _new_id(self):
        self.seq += 1
        return "mem-%d-%04d" % (self.clock(), self.seq % 10000)

    # -- writes ---------------------------------------------------------------------------

    def _prepare(self, content, tags, keywords, source):
        content = _cut(content.strip(), 255)
        tags, keywords = normalize_metadata(content, _cut(tags.strip(), 95), _cut(keywords.strip(), 127))
        if not content:
            raise ValueError("content is required")
        return {"id": "", "source": _cut(source or "manual", 15), "content": content, "tags": tags,
                "keywords": keywords, "created_at": 0, "updated_at": 0, "access_count": 0,
                "deleted": False, "summary_ids": []}

    def store(self, content, tags="", keywords="", source="manual"):
        """claw_memory_store_with_result: (item, changed)."""
        return self._store_prepared(self._prepare(content, tags, keywords, source), "store", None, None)

    def _store_prepared(self, item, action, extra, ignore_id):
        if not item["id"]:
            item["id"] = self._new_id()
        now = self.clock()
        if not item["created_at"]:
            item["created_at"] = now
        item["updated_at"] = now
        key = item_key(item, now)
        items = self._load_items()
        for it in items:
            if ignore_id and it["id"] == ignore_id:
                continue
            if (not it["deleted"] and item_key(it, now) == key) or semantic_match(it, item):
                return it, False
        idx = self._load_index()
        item["summary_ids"] = [self._ensure(idx, lab) for lab in labels(item["tags"])]
        self._append(self.records, _item_line(item) + "\n")
        self._adjust(idx, item, 1)
        items.append(item)
        self._rebuild_keywords(idx, items)
        self._save_index(idx)
        self._sync_markdown(items, idx)
        self._digest_line(action, item["id"], extra)
        self.changes += 1
        self.maybe_compact()
        return item, True

    def _find(self, items, memory_id):
        for i, it in enumerate(items):
            if it["id"] == memory_id:
                if it["deleted"]:
                    break
                return i
        raise NotFound(memory_id)

    def update(self, memory_id, content=None, tags=None, keywords=None, source=None):
        """claw_memory_update_with_result: store the replacement, forget the old, digest."""
        items = self._load_items()
        old = items[self._find(items, memory_id)]
        rep = dict(old)
        rep.update({"id": "", "summary_ids": [], "deleted": False, "access_count": 0,
                    "created_at": 0, "updated_at": 0})
        for k, v in (("source", source), ("content", content), ("tags", tags), ("keywords", keywords)):
            if v:
                rep[k] = v
        base = self._prepare(rep["content"], rep["tags"], rep["keywords"], rep["source"])
        rep.update(base)
        if all(rep[k] == old[k] for k in ("source", "content", "tags", "keywords")):
            return old, False
        items = None
        stored, c1 = self._store_prepared(rep, "update_store", memory_id, memory_id)
        forgotten, c2 = self.forget(memory_id)
        self._digest_line("update", rep["id"], forgotten["id"])
        self.maybe_compact()
        return rep, c1 or c2

    def forget(self, memory_id):
        """claw_memory_forget_with_result: tombstone; returns (the item as it was, True)."""
        items = self._load_items()
        i = self._find(items, memory_id)
        was = dict(items[i])
        tomb = dict(was)
        tomb["deleted"] = True
        tomb["updated_at"] = self.clock()
        self._append(self.records, _item_line(tomb) + "\n")
        idx = self._load_index()
        items[i] = tomb
        self._adjust(idx, tomb, -1)
        idx["summaries"] = [e for e in idx["summaries"] if e["ref_count"] > 0]
        self._rebuild_keywords(idx, items)
        self._save_index(idx)
        self._sync_markdown([it for it in items if not it["deleted"]], idx)
        self._digest_line("forget", memory_id)
        self.changes += 1
        self.maybe_compact()
        return was, True

    # -- reads ----------------------------------------------------------------------------

    def _render(self, items, idx):
        out = []
        for it in items:
            d = dict(it)
            d["summary_labels"] = self._labels_of(idx, it)
            out.append(d)
        return dumps(out)

    def recall(self, wanted=(), limit=RECALL_LIMIT):
        """claw_memory_recall: the JSON text, and one digest append per returned item."""
        idx = self._load_index()
        wanted = list(wanted)[:3]
        sids = [e["summary_id"] for lab in wanted for e in idx["summaries"] if e["label"] == lab]
        if wanted and not sids:
            return "[]"
        matches = [it for it in self._load_items() if not it["deleted"]
                   and (not sids or any(s in sids for s in it["summary_ids"]))]
        matches.sort(key=_priority)
        matches = matches[: limit or RECALL_LIMIT]
        text = self._render(matches, idx)
        for it in matches:
            self._digest_line("recall", it["id"], "access_count+1")
        return text

    def list(self):
        items = [it for it in self._load_items() if not it["deleted"]]
        items.sort(key=_priority)
        return self._render(items, self._load_index())

    def ids(self):
        return [it["id"] for it in self._load_items() if not it["deleted"]]

    # -- compaction (§7.12) -----------------------------------------------------------------

    def maybe_compact(self):
        if self.changes >= COMPACT_CHANGES or _size(self.records) >= COMPACT_SIZE:
            self.compact()

    def _recall_deltas(self, items, start, end):
        if start >= end:
            return
        byid = {it["id"]: it for it in items}
        with self.open(self.digest, "rb") as f:
            f.seek(start)
            while True:
                line = f.readline(_DIGEST_BUF - 1)
                if not line:
                    break
                fields = [x for x in line.replace(b"\r", b"\t").replace(b"\n", b"\t").split(b"\t") if x][:5]
                if len(fields) < 4 or fields[1] != b"recall" or fields[3] != b"access_count+1":
                    continue
                it = byid.get(fields[2].decode())
                if it is None:
                    continue
                if it["access_count"] < 65535:
                    it["access_count"] += 1
                ts = int(fields[0]) if fields[0].isdigit() else 0
                if ts > it["updated_at"]:
                    it["updated_at"] = ts

    def compact(self):
        now = self.clock()
        items = self._load_items()
        old = self._load_index()
        digest_size = max(_size(self.digest), 0)
        self._recall_deltas(items, old["last_compact_digest_size"], digest_size)
        merged = []
        keys = []
        for it in items:
            if it["deleted"]:
                continue
            k = item_key(it, now)
            if k in keys:
                dst = merged[keys.index(k)]
                dst["access_count"] = max(dst["access_count"], it["access_count"])
                if it["updated_at"] > dst["updated_at"]:
                    for f in ("updated_at", "content", "tags", "source"):
                        dst[f] = it[f]
                if it["created_at"] and (not dst["created_at"] or it["created_at"] < dst["created_at"]):
                    dst["created_at"] = it["created_at"]
            else:
                keys.append(k)
                merged.append(dict(it))
        while len(merged) > self.max_active:
            low = 0
            for i in range(1, len(merged)):
                if _score(merged[i]) < _score(merged[low]):
                    low = i
            merged.pop(low)
        idx = json.loads(_DEFAULT_INDEX)
        for it in merged:
            sids = []
            for lab in labels(it["tags"]):
                pref = 0
                for e in old["summaries"]:
                    if e["label"] == lab:
                        pref = e["summary_id"]
                        break
                sids.append(self._ensure(idx, lab, pref))
            it["summary_ids"] = sids
            self._adjust(idx, it, 1)
        self._rebuild_keywords(idx, merged)
        idx["last_compact_digest_size"] = digest_size
        # The records buffer is 512 bytes per item + 16: longer lines overflow it and the
        # text is cut there (a torn last line, later items lost), as snprintf does in C.
        cap = 512 * len(merged) + 16
        text = "".join(_item_line(it, True) + "\n" for it in merged)
        self._write(self.records, text if len(text) < cap else text[: cap - 1])
        self._save_index(idx)
        self._sync_markdown(merged, idx)
        self._digest_line("compact", None, "rebuild=index+markdown")
        self.changes = 0
        self.compactions += 1


def _score(it):
    return it["access_count"] * 3 + it["updated_at"] // 3600
