"""The history-search set: a data root's worth of conversations between users and an
on-device assistant, and questions asked about them later, each with its gold record(s).
Made by this generator (deterministic: the same set on every machine, no network), not
downloaded; tools/benchmark/search_eval.py builds it through claw_memory's public API and
scores `mem.search` against desktop BM25 on it.

How it is made.
- Users. Seven chats (history_en.py, history_zh.py): five English (Telegram, Feishu, a shared
  kitchen panel on the web channel, the owner's UART console) and two Chinese (QQ, Feishu),
  each with its people written once (a sister, a partner, a colleague, a dog, ...: the same
  names in every session of that chat, other names in every other chat) and 4 to 6 named
  sessions (`/session new cooking` then `/session switch ...`: ids
  `chat:<channel>:<chat_id>:<alias>`), 35 sessions in all, each on a topic (home automation,
  cooking, travel, health, work, family, pets, car, garden, finance, shopping, electronics,
  books; in Chinese home, travel, food, health, work, baby).
- Facts. Hand-written dialogue frames per topic (history_en.py and history_zh.py hold them):
  one to four turns in which a fact is said, by the user ("My sister Lena swears Osteria Dodo
  on Via Roma does the best carbonara in town"), by the assistant (an answer it gave) or by a
  tool (a weather forecast, a flight status, a sensor reading: OpenAI `tool_calls` records and
  their results), with slots filled from the chat's people and from value pools (names,
  places, codes and dates drawn without replacement across the whole set, so that every fact
  is told once). A frame is used at most once per chat and in every session of its topic, so
  the same kind of fact recurs in other users' chats with other values (the distractors of a
  question asked over the whole root), and other frames of the session talk about the same
  things (the distractors inside a chat).
- Corrections. Some frames state a fact and correct it some turns later ("Dr. Okafor's office
  moved me to Thursday at 15:10"). Only the correction is gold; the stated-then-corrected
  record is kept as `superseded` and counted as a miss when it is returned (the evaluation
  reports how often it ranks above the correction).
- Filler. Turns nobody asks about (timers, lights, weather, small talk on the session's
  topic, from templates with slots), so that sessions grow past the evaluation's small
  session limit and compaction moves their oldest turns into the archive.
- Questions. Each frame has hand-written questions phrased as people ask later, sharing few
  words with the gold record ("what was that restaurant my sister recommended?"): chat-scoped
  ones (relations: "my sister", "the dog"; asked with chat=(channel, chat_id) as the model's
  memory_search tool asks, or with session=) and root-scoped ones (naming a person or a detail
  of that chat only; asked over the whole root, as the owner does). One question per fact, a
  second one of another scope for about a third of them; every question's text is unique.
- Every record's visible text is unique in the root (checked here), so a gold record is
  identified by (session id, role, visible text). Visible text: a user message's or a final
  answer's content; a tool call's function names and arguments (role "assistant"); a tool
  result's content (role "tool").
- Order. A session's frames and filler are shuffled (a correction comes 4 or more turns after
  its fact); the chats' turns are interleaved in chunks of 2 to 7 turns, switching sessions
  with /session switch, as people come and go.
"""

import json
import random

from . import history_en, history_zh

ROLE = {"U": "user", "A": "assistant", "C": "assistant", "R": "tool"}
TYPE = {"U": 1, "A": 2, "C": 3, "R": 4}
CATEGORIES = ("user said", "assistant said", "tool result", "corrected", "two records")


def _parse(body):
    """(first part, later part) of a frame body: [(code, mark, text)] each."""
    parts = ([], [])
    cur = parts[0]
    for line in body.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "---":
            cur = parts[1]
            continue
        mark = line[0] if line[0] in "*~" else ""
        code, sep, txt = line[len(mark):].partition(": ")
        if code not in ROLE or not sep or not txt:
            raise ValueError("bad frame line: %r" % line)
        cur.append((code, mark, txt))
    return parts


def _turns(lines):
    """Lines grouped into turns (each starts with a user line)."""
    out = []
    for ln in lines:
        if ln[0] == "U" or not out:
            if ln[0] != "U":
                raise ValueError("a turn must start with a user line: %r" % (ln,))
            out.append([])
        out[-1].append(ln)
    return out


def _slots(*texts):
    names = []
    for t in texts:
        i = t.find("{")
        while i >= 0:
            j = t.index("}", i)
            name = t[i + 1:j].split("[")[0]
            if name not in names:
                names.append(name)
            i = t.find("{", j)
    return names


def visible(code, msg):
    """The visible text of a record made here (see the module docstring)."""
    if code in "UA":
        return msg["content"]
    if code == "C":
        return "\n".join(s for c in msg["tool_calls"] for s in (c["function"]["name"], c["function"]["arguments"]))
    return "\n".join(r["content"] for r in msg)


class _Maker:
    def __init__(self, rng, pools, unique):
        self.rng = rng
        self.pools = pools
        self.unique = unique
        self.taken = {}  # pool: values used (unique pools)
        self.texts = set()
        self.calls = 0

    def values(self, names, persona, filler=None):
        """Values of the slots `names`; `filler` (a dict): from any pool value, used or not."""
        vals = {}
        for name in names:
            if name in persona:
                vals[name] = persona[name]
            else:
                pool = name.rstrip("0123456789")
                if pool not in self.pools:
                    raise ValueError("no pool for slot {%s}" % name)
                used = self.taken.get(pool, ()) if pool in self.unique and filler is None else ()
                mine = [v for k, v in vals.items() if k.rstrip("0123456789") == pool]
                free = [v for v in self.pools[pool] if v not in used and v not in mine]
                if not free:
                    raise ValueError("pool %r exhausted" % pool)
                vals[name] = self.rng.choice(free)
        return vals

    def take(self, vals):
        """Mark the values of unique pools used."""
        for name, v in vals.items():
            pool = name.rstrip("0123456789")
            if pool in self.unique:
                self.taken.setdefault(pool, set()).add(v)

    def records(self, turn, vals):
        """[(code, mark, message)] of one turn with its slots filled."""
        out = []
        call = None
        for code, mark, tmpl in turn:
            txt = tmpl.format(**vals)
            if code in "UA":
                msg = {"role": ROLE[code], "content": txt}
            elif code == "C":
                name, *args = txt.split("|")
                self.calls += 1
                call = "call_%04d" % self.calls
                arguments = json.dumps(dict(a.split("=", 1) for a in args), ensure_ascii=False)
                msg = {"role": "assistant", "content": None, "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": name, "arguments": arguments}}]}
            else:
                msg = [{"role": "tool", "tool_call_id": call, "content": txt, "is_error": False}]
            out.append((code, mark, msg))
        return out

    def fresh(self, recs):
        texts = [visible(c, m) for c, _, m in recs]
        return len(set(texts)) == len(texts) and not self.texts.intersection(texts)

    def claim(self, recs):
        for c, _, m in recs:
            self.texts.add(visible(c, m))


def _session_units(mk, lang, chat, sess, used_frames, frames, filler):
    """The turns of one session (frames and filler shuffled, corrections after their facts)
    and the facts told in it: [(frame, values, [turn records of the first part],
    [of the later part])]."""
    rng = mk.rng
    persona = chat["persona"]
    facts = []
    for fr in frames[sess["topic"]]:
        if fr[0] in used_frames:
            continue
        used_frames.add(fr[0])
        first, later = _parse(fr[1])
        texts = [t for _, _, t in first + later] + [q[2:].strip() for q in fr[2].strip().splitlines()]
        for attempt in range(20):
            vals = mk.values(_slots(*texts), persona)
            a = [mk.records(t, vals) for t in _turns(first)]
            b = [mk.records(t, vals) for t in _turns(later)]
            if mk.fresh([r for t in a + b for r in t]):
                break
        else:
            raise ValueError("frame %s: no unique texts" % fr[0])
        mk.claim([r for t in a + b for r in t])
        mk.take(vals)
        facts.append((fr, vals, a, b))
    units = [[t for t in f[2]] for f in facts]
    mine = filler.get(sess["topic"], [])
    for _ in range(sess["filler"]):
        for attempt in range(50):
            tmpl = rng.choice(mine if mine and rng.random() < 0.5 else filler["any"])
            lines = _parse(tmpl)[0]
            vals = mk.values(_slots(*[t for _, _, t in lines]), persona, {})
            ts = [mk.records(t, vals) for t in _turns(lines)]
            if mk.fresh([r for t in ts for r in t]):
                break
        else:
            raise ValueError("filler of %s: no unique texts" % sess["alias"])
        mk.claim([r for t in ts for r in t])  # (filler may name a fact's values too)
        units.append(ts)
    order = list(range(len(units)))
    rng.shuffle(order)
    turns = []
    late = []  # (earliest turn index, turns)
    for u in order:
        turns.extend(units[u])
        if u < len(facts) and facts[u][3]:
            late.append((len(turns) + 3, facts[u][3]))
    for at, ts in late:
        at = min(len(turns), at + rng.randrange(0, 6))
        turns[at:at] = ts
    return turns, facts


def _questions(rng, lang, chat, sess, facts, asked):
    out = []
    for fr, vals, first, later in facts:
        qs = {"c": [], "r": []}
        for q in fr[2].strip().splitlines():
            q = q.strip()
            qs[q[0]].append(q[2:].strip().format(**vals))
        gold, old = [], []
        for t in first + later:
            for code, mark, msg in t:
                key = [sess["id"], ROLE[code], visible(code, msg)]
                if mark == "*":
                    gold.append(key)
                elif mark == "~":
                    old.append(key)
        if later and any(m == "*" for t in later for _, m, _ in t):
            cat = "corrected"
        elif len(gold) > 1:
            cat = "two records"
        else:
            cat = {"user": "user said", "assistant": "assistant said", "tool": "tool result"}[gold[0][1]]
        scopes = ["root"] if qs["r"] and rng.random() < 0.35 else []
        scopes.append("session" if rng.random() < 0.12 else "chat")
        if rng.random() < 0.35:
            scopes.append("chat" if scopes[0] == "root" else "root")
        for scope in scopes[:2]:
            cands = [q for q in qs["r" if scope == "root" else "c"] if q not in asked]
            if not cands:
                continue
            q = rng.choice(cands)
            asked.add(q)
            out.append({"text": q, "scope": scope, "chat": chat["chat"] if scope == "chat" else None,
                        "session": sess["id"] if scope == "session" else None, "gold": gold,
                        "superseded": old, "category": cat, "lang": lang, "frame": fr[0],
                        "topic": sess["topic"]})
    return out


def make(seed=26):
    """The whole set: {"sessions", "events", "records", "questions"}.

    sessions: [{"id", "chat": [channel, chat_id], "alias", "lang", "topic"}];
    events, in order: ["command", channel, chat_id, text after /session] or
    ["turn", channel, chat_id, session id, [[type, message JSON, role, visible text], ...]];
    records: every record once, in order: {"session", "role", "type", "text"};
    questions: {"text", "scope" ("chat", "session", "root"), "chat", "session", "gold" and
    "superseded" ([[session id, role, text]]), "category", "lang", "frame", "topic"}."""
    rng = random.Random(seed)
    langs = (("en", history_en), ("zh", history_zh))
    unique = set()
    pools = {}
    for _, mod in langs:
        for k, v in mod.POOLS.items():
            if k in pools:
                raise ValueError("pool %r defined twice" % k)
            vals = v.split("|") if isinstance(v, str) else list(v)
            pools[k] = [tuple(x.split("#")) if "#" in x else x for x in vals]
        unique |= set(mod.UNIQUE)
    mk = _Maker(rng, pools, unique)
    sessions, questions, per_chat = [], [], []
    asked = set()
    for lang, mod in langs:
        for chat in mod.CHATS:
            used = set()
            queue = []
            for sess in chat["sessions"]:
                sid = "chat:%s:%s:%s" % (chat["chat"][0], chat["chat"][1], sess["alias"])
                sess = dict(sess, id=sid)
                sessions.append({"id": sid, "chat": list(chat["chat"]), "alias": sess["alias"], "lang": lang,
                                 "topic": sess["topic"]})
                turns, facts = _session_units(mk, lang, chat, sess, used, mod.FRAMES, mod.FILLER)
                questions += _questions(rng, lang, chat, sess, facts, asked)
                queue.append([sess["alias"], sid, turns])
            per_chat.append((chat, queue))
    events = _interleave(rng, per_chat)
    records = [{"session": e[3], "role": r[2], "type": r[0], "text": r[3]}
               for e in events if e[0] == "turn" for r in e[4]]
    return {"sessions": sessions, "events": events, "records": records, "questions": questions}


def _interleave(rng, per_chat):
    """Events: the chats' turns in chunks, with the /session commands that switch to them.
    A chat starts in default_01 (the alias its map begins with)."""
    events = []
    current = {}
    started = {}
    left = [c for c in per_chat]
    while left:
        chat, queue = rng.choice(left)
        ch, cid = chat["chat"]
        key = (ch, cid)
        if key not in current:
            pick = queue[0]
            if pick[0] != "default_01":
                raise ValueError("a chat's first session must be default_01")
            current[key] = "default_01"
            started[key] = {"default_01"}
        else:
            live = [q for q in queue if q[2]]
            pick = rng.choice(live)
            if pick[0] != current[key]:
                cmd = "switch " if pick[0] in started[key] else "new "
                events.append(["command", ch, cid, cmd + pick[0]])
                started[key].add(pick[0])
                current[key] = pick[0]
        n = rng.randrange(2, 8)
        for turn in pick[2][:n]:
            recs = [[TYPE[c], None if c in "UA" else json.dumps(m, ensure_ascii=False), ROLE[c], visible(c, m)]
                    for c, _, m in turn]
            events.append(["turn", ch, cid, pick[1], recs])
        del pick[2][:n]
        if not any(q[2] for q in queue):
            left.remove((chat, queue))
    return events


def stats(hs):
    """A summary: sessions, chats, turns, records, questions per category, scope and language."""
    qs = hs["questions"]
    out = {"sessions": len(hs["sessions"]), "chats": len({tuple(s["chat"]) for s in hs["sessions"]}),
           "turns": sum(1 for e in hs["events"] if e[0] == "turn"),
           "records": len(hs["records"]), "questions": len(qs),
           "bytes": sum(len(r[3].encode()) for e in hs["events"] if e[0] == "turn" for r in e[4])}
    for field in ("category", "scope", "lang"):
        for q in qs:
            k = "%s:%s" % (field, q[field])
            out[k] = out.get(k, 0) + 1
    return out


if __name__ == "__main__":
    s = make()
    for k, v in stats(s).items():
        print(k, v)
    for q in s["questions"][:: max(1, len(s["questions"]) // 12)]:
        print(q["scope"], q["category"], q["text"], "->", q["gold"][0][2][:80])
