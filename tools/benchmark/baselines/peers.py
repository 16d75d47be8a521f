# Simple MicroPython agents' memory, as peers in the benchmark (tools/bench.py). MIT license
#
# What agents written directly in MicroPython tend to do: keep the history as one JSON file
# and rewrite it whole. They are not ESP-Claw and not us; they show what the plain approach
# costs on the same flash, with the same data.

import json

from espclaw import dumps, item_key, labels, normalize_metadata


def _message(t, mj, tx):
    if mj:
        return json.loads(mj)
    return {"role": "user" if t == 1 else "assistant", "content": tx}


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return []


class RewritePerPersist:
    """The whole history as one JSON array, loaded and rewritten on every persist batch
    (three times per turn). Keeps nothing in RAM between calls."""

    def __init__(self, directory):
        self.dir = directory

    def path(self, session_id):
        return "%s/naive_%08x.json" % (self.dir, hash(session_id) & 0xFFFFFFFF)

    def persist(self, session_id, records, turn_completed=False):
        msgs = _load(self.path(session_id))
        for t, mj, tx in records:
            m = _message(t, mj, tx)
            msgs.extend(m if isinstance(m, list) else [m])
        with open(self.path(session_id), "w") as f:
            f.write(dumps(msgs))

    def request_body(self, session_id):
        return dumps(_load(self.path(session_id)))


class RewritePerTurn:
    """ChipClaw-style (github.com/0x1abin/chipclaw, session/manager.py): the session's
    messages live in RAM, loaded once from a JSONL file; when a turn completes the whole file
    is rewritten, one write per message. ChipClaw itself keeps only the user message and the
    final answer; here every record is kept, so that the file holds the same history as the
    other systems'."""

    def __init__(self, directory):
        self.dir = directory
        self.sessions = {}

    def path(self, session_id):
        return "%s/chip_%08x.jsonl" % (self.dir, hash(session_id) & 0xFFFFFFFF)

    def _get(self, session_id):
        msgs = self.sessions.get(session_id)
        if msgs is None:
            msgs = []
            try:
                with open(self.path(session_id)) as f:
                    for line in f:
                        if line.strip():
                            msgs.append(json.loads(line))
            except OSError:
                pass
            self.sessions[session_id] = msgs
        return msgs

    def persist(self, session_id, records, turn_completed=False):
        msgs = self._get(session_id)
        for t, mj, tx in records:
            m = _message(t, mj, tx)
            msgs.extend(m if isinstance(m, list) else [m])
        if turn_completed:
            with open(self.path(session_id), "w") as f:
                for m in msgs:
                    f.write(dumps(m) + "\n")

    def request_body(self, session_id):
        return dumps(self._get(session_id))


class NaiveStore:
    """Every item in one JSON array, loaded and rewritten whole on every change (no digest,
    no index, no MEMORY.md, no cap)."""

    def __init__(self, directory, clock):
        self.path = directory + "/naive_memory.json"
        self.clock = clock
        self.seq = 0

    def _save(self, items):
        with open(self.path, "w") as f:
            f.write(dumps(items))

    def load_items(self, items):
        self._save(items)

    def store(self, content, tags="", keywords="", source="manual"):
        items = _load(self.path)
        now = self.clock()
        tags, keywords = normalize_metadata(content, tags, keywords)
        new = {"id": "", "content": content, "tags": tags, "keywords": keywords,
               "access_count": 0, "updated_at": now, "deleted": False}
        k = item_key(new, now)
        for it in items:
            if item_key(it, now) == k:
                return it, False
        self.seq += 1
        new["id"] = "mem-%d-%04d" % (now, self.seq)
        items.append(new)
        self._save(items)
        return new, True

    def update(self, memory_id, content=None, tags=None, keywords=None):
        items = _load(self.path)
        for it in items:
            if it["id"] == memory_id:
                it["content"] = content or it["content"]
                it["updated_at"] = self.clock()
        self._save(items)

    def forget(self, memory_id):
        self._save([it for it in _load(self.path) if it["id"] != memory_id])

    def recall(self, wanted=(), limit=8):
        items = [it for it in _load(self.path)
                 if not wanted or any(lab in labels(it["tags"]) for lab in wanted)]
        items.sort(key=lambda it: (-it["access_count"], -it["updated_at"]))
        return items[:limit]

    def list(self):
        return _load(self.path)
