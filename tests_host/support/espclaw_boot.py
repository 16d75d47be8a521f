# What ESP-Claw's C claw_memory does to a data root's long-term store when its firmware boots:
# claw_memory_init() always ends with claw_memory_compact_internal(false), a compaction without
# a digest line (§7.12 in docs/DESIGN.md); `boot=False`: the compaction its 5th change or 32 KiB
# of records runs (claw_memory_maybe_compact), which appends the digest's compact line. For
# hand-over tests: records read
# line by line (the last line per id wins), recall lines replayed from the index's
# last_compact_digest_size, duplicates merged, capacity 128, labels cut to 8 characters, and
# the index written in the key order its compaction leaves (the counters after the keyword
# index). Test support, not the library: it follows the C code, defects included. (espclaw.py
# is the benchmark's operation-by-operation port; this one writes the exact bytes a boot
# leaves, a BOM-tolerant reader included, for the hand-over tests.)
import json

MAX_ACTIVE = 128


def _load(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def _norm_key(content):
    out = []
    for ch in content:
        o = ord(ch)
        if o < 0x80:
            if 0x41 <= o <= 0x5A:
                ch = chr(o + 32)
            elif not (0x61 <= o <= 0x7A or 0x30 <= o <= 0x39):
                continue
        out.append(ch)
    return "".join(out).encode()[:36]


def _labels(tags):
    out = []
    for t in tags.replace(";", ",").replace("/", ",").replace("|", ",").split(","):
        t = t.strip()[:8]  # CLAW_MEMORY_MAX_LABEL_CHARS: 8 characters (ASCII here)
        if t and t not in out:
            out.append(t)
        if len(out) == 3:
            break
    return out


def compact(memdir, now, boot=True):
    records = memdir + "/memory_records.jsonl"
    index = memdir + "/memory_index.json"
    digest = memdir + "/memory_digest.log"
    items = {}
    order = []
    for line in (_load(records) or b"").split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict) or not obj.get("id"):
            continue
        if obj["id"] not in items:
            order.append(obj["id"])
        items[obj["id"]] = obj
    old = json.loads(_load(index) or b"{}")
    dig = _load(digest) or b""
    start = old.get("last_compact_digest_size", 0)
    for line in dig[start:].split(b"\n"):
        f = line.split(b"\t")
        if len(f) >= 4 and f[1] == b"recall" and f[3] == b"access_count+1":
            it = items.get(f[2].decode())
            if it is not None:
                it["access_count"] = min(it.get("access_count", 0) + 1, 65535)
                it["updated_at"] = max(it.get("updated_at", 0), int(f[0]))
    kept = []
    bykey = {}
    for mid in order:
        it = items[mid]
        if it.get("deleted") is True:
            continue
        k = _norm_key(it["content"])
        if k in bykey:
            first = bykey[k]
            first["access_count"] = max(first["access_count"], it.get("access_count", 0))
            if it.get("updated_at", 0) > first.get("updated_at", 0):
                for f in ("updated_at", "content", "tags", "source"):
                    first[f] = it[f]
            continue
        bykey[k] = it
        kept.append(it)
    while len(kept) > MAX_ACTIVE:
        low = min(range(len(kept)), key=lambda i: kept[i]["access_count"] * 3 + kept[i]["updated_at"] // 3600)
        kept.pop(low)
    preferred = {s["label"]: s["summary_id"] for s in old.get("summaries", [])}
    next_id = old.get("next_summary_id", 1)
    summaries = []
    for it in kept:
        sids = []
        for lab in _labels(it.get("tags", "")):
            e = next((s for s in summaries if s["label"] == lab), None)
            if e is None:
                used = [s["summary_id"] for s in summaries]
                sid = preferred.get(lab, 0)
                if not sid or sid in used:
                    sid = next_id
                    while sid in used:
                        sid += 1
                e = {"summary_id": sid, "label": lab, "ref_count": 0}
                summaries.append(e)
                next_id = max(next_id, sid + 1)
            e["ref_count"] += 1
            sids.append(e["summary_id"])
        it["summary_ids"] = sids
    kw = {}
    for it in kept:
        for t in (it.get("keywords") or it.get("tags") or "").split(","):
            if t.strip():
                kw.setdefault(t.strip(), []).append(it["id"])
    keys = ("id", "source", "content", "tags", "keywords", "created_at", "updated_at",
            "access_count", "deleted", "summary_ids")
    with open(records, "w") as f:
        for it in kept:
            f.write("{" + ",".join('"%s":%s' % (k, json.dumps(it.get(k, False if k == "deleted" else 0)))
                                   for k in keys) + ',"summary_labels":[]}\n')
    # Its compaction deletes and re-appends the counters: they come after keyword_index.
    with open(index, "w") as f:
        f.write('{"version":3,"summaries":%s,"keyword_index":%s,"next_summary_id":%d,'
                '"last_compact_digest_size":%d}' % (json.dumps(summaries), json.dumps(kw), next_id, len(dig)))
    if not boot:
        with open(digest, "ab") as f:
            f.write(b"%d\tcompact\t-\trebuild=index+markdown\n" % now)
    from claw_memory._compat import local_time_str

    md = "# Long-term Memory\n\n"
    if summaries:
        md += "## Summary Labels\n\n" + "".join("- %s (refs=%d)\n" % (s["label"], s["ref_count"])
                                                for s in summaries) + "\n"
    if not kept:
        md += "(empty - Claw will write memories here as it learns)\n"
    else:
        md += "## Active Memories\n\n"
        byid = {s["summary_id"]: s["label"] for s in summaries}
        for it in sorted(kept, key=lambda i: (-i["access_count"], -i["updated_at"], i["id"])):
            md += "- `%s` %s\n  time=%s access=%d labels=%s\n" % (
                it["id"], it["content"], local_time_str(it["updated_at"]), it["access_count"],
                json.dumps([byid[s] for s in it["summary_ids"]]).replace(", ", ","))
    with open(memdir + "/MEMORY.md", "w") as f:
        f.write(md)
    return kept
