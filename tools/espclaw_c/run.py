"""ESP-Claw's real C `claw_memory` on a host folder, against ours: a dev tool.

The harness compiles ESP-Claw's own sources (claw_memory.c, claw_memory_session.c,
claw_memory_storage.c, claw_memory_utils.c, claw_memory_profile.c, claw_memory_extract.c,
claw_memory_lightweight.c and claw_manager's claw_session_mgr.c) from an ESP-Claw checkout
with host stubs of ESP-IDF and FreeRTOS (tools/espclaw_c/stubs/, stubs.c; the LLM runtime is
a stub that fails, so the asynchronous extraction stays off) and a small driver (main.c: one
JSON command per line, one JSON answer per line). Nothing of ESP-Claw is copied here.

What the C side runs: claw_memory_init (with its boot compaction of the long-term store),
the Session History provider's load (the request's history), the persist callback (a turn:
user, tool call, tool result, final answer, with its compaction and block marker), the
request gate, claw_memory_delete_session_history, store/update/forget/list/recall and
claw_memory_compact_internal, and the session manager's chat maps (/session new, list,
switch, delete; the session id of a chat).

Scenarios (each on a fresh host folder, our side under CPython and under the MicroPython
unix port, `.venv/bin/micropython` with MICROPYPATH at the checkout):

- ours_first: ours writes sessions (tool rounds, a compaction into the archive with text
  indexes, a pending turn, chat maps, long-term items), then ESP-Claw loads every session,
  appends turns, compacts one, uses the chat maps and the store; ours reopens.
- esp_first: ESP-Claw writes first (its compaction, a blocked session), ours reads, persists,
  compacts; ESP-Claw reads again.
- bytes: the same turns, chat-map commands and stores on both sides, compared byte for byte
  (.log, .idx, chat maps, memory_records.jsonl lines with ids and times masked).

- port: our Python port of ESP-Claw (tools/benchmark/baselines/espclaw.py) against the C
  code: the same persists over three backends, a compaction and a block give the same .log,
  .idx and request bodies.
- reset: ours persists turns and is cut off without close() (a reset, a firmware switch by
  flashing), then ESP-Claw's firmware takes the root: a known open finding (docs/FORMAT.md,
  "our index may lag"), expected to fail.

Usage, with an ESP-Claw source tree (its components/claw_modules and
components/claw_capabilities; the snapshot used here: github.com/Bariest/esp-claw) in
/tmp/espclaw:

    CLAW_ESPCLAW_SRC=/tmp/espclaw .venv/bin/python tools/espclaw_c/run.py [scenario ...] \\
        [--runtime cpython|micropython]
    CLAW_ESPCLAW_SRC=/tmp/espclaw .venv/bin/python -m pytest -q tests_host/test_espclaw_c.py

Without CLAW_ESPCLAW_SRC the pytest test is skipped. Needs gcc and cJSON (-lcjson).
MIT license.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
_MEMORY = "components/claw_modules/claw_memory"
_SOURCES = [_MEMORY + "/src/claw_memory%s.c" % s for s in
            ("", "_session", "_storage", "_utils", "_profile", "_extract", "_lightweight")]
_SOURCES.append("components/claw_modules/claw_manager/src/claw_session_mgr.c")
_INCLUDES = ["components/claw_modules/claw_core/include", "components/claw_modules/claw_core/src",
             _MEMORY + "/include", _MEMORY + "/src", "components/claw_modules/claw_manager/include"]


def source():
    """The ESP-Claw checkout named by CLAW_ESPCLAW_SRC, or None."""
    src = os.environ.get("CLAW_ESPCLAW_SRC")
    if src and os.path.isfile(os.path.join(src, _SOURCES[1])):
        return src
    return None


def build(src, out_dir):
    """Compile the harness; returns the binary's path."""
    binary = os.path.join(out_dir, "espclaw_host")
    cjson = "/usr/include/cjson"
    cmd = ["gcc", "-g", "-O0", "-Wall", "-Wno-unused-function", "-I", os.path.join(HERE, "stubs"),
           "-I", cjson]
    for inc in _INCLUDES:
        cmd += ["-I", os.path.join(src, inc)]
    cmd += [os.path.join(src, s) for s in _SOURCES]
    cmd += [os.path.join(HERE, "stubs.c"), os.path.join(HERE, "main.c"), "-lcjson", "-o", binary]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return binary


class EspClaw:
    """One boot of ESP-Claw's firmware on a data root: claw_memory_init, then commands."""

    def __init__(self, binary, root, backend="openai_compatible"):
        self.log = tempfile.TemporaryFile("w+")
        self.p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, text=True)
        r = self("init", root=root, backend=backend)
        if r["err"] != "ESP_OK":
            raise OSError("claw_memory_init: %s" % r["err"])

    def __call__(self, op, **kw):
        kw["op"] = op
        self.p.stdin.write(json.dumps(kw) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise OSError("ESP-Claw's harness died (%s): %s" % (op, self.stderr()))
        return json.loads(line)

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)
        return self.stderr()

    # the records of a turn as ESP-Claw's core persists them
    def turn(self, sid, word, pad=0, tools=True):
        out = [self("persist", sid=sid, records=[[1, None, "user %s" % word]], done=False)]
        if tools:
            out.append(self("persist", sid=sid, records=[
                [3, call(word), None], [4, result(word, pad), None]], done=False))
        out.append(self("persist", sid=sid, records=[[2, final(word), None]], done=True))
        return [r["err"] for r in out]

    def messages(self, sid):
        r = self("load", sid=sid)
        return json.loads(r["json"]) if r["json"] else []


def call(w):
    return ('{"role":"assistant","content":null,"tool_calls":[{"id":"c%s","type":"function",'
            '"function":{"name":"lookup","arguments":"{\\"q\\":\\"%s\\"}"}}]}' % (w, w))


def result(w, pad=0):
    return ('[{"role":"tool","tool_call_id":"c%s","content":"result %s %s","is_error":false}]'
            % (w, w, "r" * pad))


def final(w):
    return '{"role":"assistant","content":"final %s"}' % w


def tags(msgs):
    """("user"|"final"|"call"|"tool", word) of each message (system summaries left out)."""
    out = []
    for m in msgs:
        if m["role"] == "tool":
            out.append(("tool", m["tool_call_id"][1:]))
        elif m.get("tool_calls"):
            out.append(("call", m["tool_calls"][0]["id"][1:]))
        elif m["role"] in ("user", "assistant"):
            kind, w = m["content"].split()[:2]
            out.append((kind, w))
    return out


_OURS_PRELUDE = """
import json
import claw_memory
from claw_memory.session.sessions import Sessions
ROOT = %r
notes = []
mem = claw_memory.open(ROOT, backend="openai", log=notes.append, clock=lambda: %d)
S = mem.sessions
def call(w):
    return %r %% (w, w)
def result(w, pad=0):  # (a literal: MicroPython's dicts keep no key order)
    return ('[{"role":"tool","tool_call_id":"c%%s","content":"result %%s %%s","is_error":false}]'
            %% (w, w, "r" * pad))
def final(w):
    return '{"role":"assistant","content":"final %%s"}' %% w
def turn(sid, w, pad=0, tools=True, done=True):
    S.persist(sid, [(1, None, "user " + w)])
    if tools:
        S.persist(sid, [(3, call(w), None), (4, result(w, pad), None)])
    if done:
        return S.persist(sid, [(2, final(w), None)], True)
def out(**kw):
    print("OUT " + json.dumps(kw))
"""

CLOCK = 1796600000


def ours(root, code, runtime="cpython"):
    """Run `code` with our library on the data root (mem, S, turn(), out() predefined);
    returns the dicts it passed to out()."""
    prog = _OURS_PRELUDE % (root, CLOCK, call("%s").replace("%s", "%s")) + code
    if runtime == "micropython":
        cmd = [os.path.join(REPO, ".venv", "bin", "micropython"), "-X", "heapsize=16M", "-c", prog]
        env = dict(os.environ, MICROPYPATH=REPO)
    else:
        cmd = [sys.executable, "-c", prog]
        env = dict(os.environ, PYTHONPATH=REPO)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        raise AssertionError("our side (%s) failed:\n%s%s" % (runtime, p.stdout[-3000:], p.stderr[-3000:]))
    return [json.loads(ln[4:]) for ln in p.stdout.splitlines() if ln.startswith("OUT ")]


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class Check:
    def __init__(self, name):
        self.name = name
        self.failures = []

    def eq(self, got, want, what):
        if got != want:
            g, w = repr(got), repr(want)
            i = next((k for k in range(min(len(g), len(w))) if g[k] != w[k]), 0)
            i = max(0, i - 120)
            self.failures.append("%s: %s (first difference at %d of the repr):\n  got  ...%s\n  want ...%s"
                                 % (self.name, what, i, g[i:i + 300], w[i:i + 300]))

    def ok(self, cond, what):
        if not cond:
            self.failures.append("%s: %s" % (self.name, what))


# -- scenarios -------------------------------------------------------------------------------

SID_A = "chat:web:u1:default_01"
SID_W = "chat:web:u1:work"
SID_P = "chat:web:u1:proj"
SID_Q = "chat:web:u2:default_01"


def ours_first(binary, root, runtime):
    c = Check("ours_first/" + runtime)
    # Ours: chat maps, turns with tool rounds, a compaction into the archive, pending turns,
    # long-term items (some by a tool, with our provenance keys).
    r = ours(root, """
mem.chats.session_id("web", "u1")
mem.session_command("web", "u1", "new work")
mem.session_command("web", "u1", "new proj")
mem.session_command("web", "u1", "switch default_01")
mem.chats.session_id("web", "u2")
for i in range(14):
    turn(%r, "a%%d" %% i, pad=12000)
turn(%r, "w0")
turn(%r, "w1", tools=False)
turn(%r, "p0")
turn(%r, "p1", done=False)
turn(%r, "q0")
turn(%r, "q1", done=False)
mem.store.store("The user likes lettuce", tags="dietary", keywords="lettuce")
mem.store.store("The user walks the dog at seven", tags="routine,pets", keywords="dog")
mem.store.store("The user's sister is called Ana", tags="family", keywords="sister", by=mem.by(%r, "user a13"))
mem.close()
import os
out(files=sorted(os.listdir(ROOT + "/sessions")), tix=sorted(os.listdir(ROOT + "/search")),
    arch=[h["session"] for h in
    claw_memory.open(ROOT).search("a0 lookup", limit=50) if h["archived"]])
""" % (SID_A, SID_W, SID_W, SID_P, SID_P, SID_Q, SID_Q, SID_A), runtime)
    files = r[0]["files"]
    c.ok(any(".arc" in n for n in files), "our compaction made an archive segment: %r" % files)
    tix = r[0]["tix"]
    c.ok(tix and all(n.endswith(".tix") for n in tix), "text indexes present, in their folder: %r" % tix)
    c.ok(any(n.endswith(".pending") for n in files), "a pending turn present")
    snap = {n: _read(os.path.join(root, "sessions", n)) for n in files
            if not os.path.isdir(os.path.join(root, "sessions", n))}
    snap.update({"../search/" + n: _read(os.path.join(root, "search", n)) for n in tix})

    esp = EspClaw(binary, root)
    # ESP-Claw reads every session as it builds a request.
    want_a = esp.messages(SID_A)
    c.ok(("user", "a13") in tags(want_a) and ("final", "a13") in tags(want_a),
         "ESP-Claw loads our compacted session: %r" % tags(want_a)[-4:])
    c.eq(tags(esp.messages(SID_W)), [("user", "w0"), ("call", "w0"), ("tool", "w0"),
                                     ("final", "w0"), ("user", "w1"), ("final", "w1")],
         "ESP-Claw loads session work")
    c.eq(tags(esp.messages(SID_P)), [("user", "p0"), ("call", "p0"), ("tool", "p0"),
                                     ("final", "p0")], "ESP-Claw loads proj (the pending turn is ours)")
    # ESP-Claw's chat map reads ours.
    lst = esp("chat_list", channel="web", chat_id="u1")
    c.eq((lst["err"], lst.get("sessions"), lst.get("current")),
         ("ESP_OK", ["default_01", "work", "proj"], "default_01"), "ESP-Claw lists our chat map")
    c.eq(esp("chat_sid", channel="web", chat_id="u2")["sid"], "chat:web:u2:default_01",
         "ESP-Claw's session id of chat u2")
    # ESP-Claw appends turns: to A (compacting once it passes 150 KiB), to proj (after our
    # pending turn began: ours drops that turn as superseded), a new session.
    a_log = os.path.join(root, "sessions", _name(SID_A))
    sizes = []
    for w in ("e0", "e1", "e2", "e3", "e4", "e5"):
        errs = esp.turn(SID_A, w, pad=30000)
        c.eq(errs, ["ESP_OK"] * 3, "ESP-Claw appends turn %s to A" % w)
        sizes.append(os.path.getsize(a_log))
    c.ok(any(b < a for a, b in zip(sizes, sizes[1:])), "ESP-Claw compacted A in place: %r" % sizes)
    c.eq(esp.turn(SID_P, "pe"), ["ESP_OK"] * 3, "ESP-Claw appends to proj")
    c.eq(esp("chat_new", channel="web", chat_id="u1", alias="esp")["err"], "ESP_OK", "/session new esp")
    c.eq(esp.turn("chat:web:u1:esp", "x0"), ["ESP_OK"] * 3, "ESP-Claw's new session")
    c.eq(esp("chat_switch", channel="web", chat_id="u1", alias="work")["err"], "ESP_OK", "switch")
    c.eq(esp("chat_delete", channel="web", chat_id="u1", alias="esp")["err"], "ESP_OK",
         "/session delete esp")
    a_after = tags(esp.messages(SID_A))
    c.ok(a_after.count(("user", "e5")) == 1 and ("call", "e0") not in a_after,
         "ESP-Claw's compaction kept the newest tool turn only: %r" % a_after[-8:])
    c.ok(_read(os.path.join(root, "sessions", _name(SID_A))).count(b'"user e0"') == 1,
         "ESP-Claw's turns once in its log")
    st = esp("store", content="The user plays chess on Sundays", tags="hobby", keywords="chess")
    c.eq(st["err"], "ESP_OK", "ESP-Claw stores an item")
    lst = json.loads(esp("list")["json"])
    c.eq(sorted(i["content"] for i in lst), sorted([
        "The user likes lettuce", "The user walks the dog at seven",
        "The user's sister is called Ana", "The user plays chess on Sundays"]),
        "ESP-Claw lists our items and its own")
    log = esp.close()
    c.ok("Reinitializing" not in log and "Resetting" not in log,
         "ESP-Claw reset nothing: %s" % "\n".join(ln for ln in log.splitlines()
                                                  if "Reset" in ln or "Reinit" in ln))
    for n, b in snap.items():  # ESP-Claw never touches our files
        if n.startswith("../search/") or n.endswith(".pending") or ".arc" in n or n == "archive.list":
            p = os.path.join(root, "sessions", n)
            c.ok(os.path.exists(p) and _read(p) == b, "ESP-Claw left our %s as it was" % n)

    # Ours reopens.
    r = ours(root, """
rows = {}
for sid in (%r, %r, %r, %r):
    rows[sid] = [[m["role"], m.get("content") if isinstance(m.get("content"), str) else None,
                  (m.get("tool_calls") or [{}])[0].get("id"), m.get("tool_call_id")]
                 for m in S.messages(sid, tokens=0)]
hits = mem.search("e5 lookup", limit=50)
hits_a = mem.search("a0 lookup", limit=50)
v = S.verify(%r)
out(rows=rows, hits=[[h["session"], h["role"], h["text"][:20], h["archived"]] for h in hits],
    hits_a=[[h["session"], h["archived"], h["text"][:12]] for h in hits_a],
    verify=v, notes=notes, chats=list(mem.chats.ids()),
    items=sorted(i["content"] for i in mem.store.list()))
turn(%r, "o9")
turn(%r, "o8", pad=100)
mem.close()
""" % (SID_A, SID_W, SID_P, SID_Q, SID_A, SID_A, SID_P), runtime)[0]
    rows = r["rows"]
    a = [_tag(x) for x in rows[SID_A]]
    for w in ("e0", "e1", "e2", "e3", "e4", "e5"):
        c.eq(a.count(("user", w)), 1, "ours reads ESP-Claw's turn %s once" % w)
        c.eq(a.count(("final", w)), 1, "ours reads ESP-Claw's final %s once" % w)
    for i in range(14):
        c.ok(a.count(("user", "a%d" % i)) <= 1, "our turn a%d at most once" % i)
    c.eq(a.count(("user", "a13")), 1, "our last turn before ESP-Claw's kept")
    p = [_tag(x) for x in rows[SID_P]]
    c.eq(p, [("user", "p0"), ("call", "p0"), ("tool", "p0"), ("final", "p0"),
             ("user", "pe"), ("call", "pe"), ("tool", "pe"), ("final", "pe")],
         "proj: ESP-Claw's turn after ours; our superseded pending turn dropped")
    q = [_tag(x) for x in rows[SID_Q]]
    c.eq(q, [("user", "q0"), ("call", "q0"), ("tool", "q0"), ("final", "q0"),
             ("user", "q1"), ("call", "q1"), ("tool", "q1")],
         "u2: our pending turn (ESP-Claw never touched it) still there")
    c.ok(any(h[0] == SID_A and "e5" in h[2] for h in r["hits"]),
         "search finds ESP-Claw's turn after its compaction (stale text index): %r" % r["hits"][:5])
    c.ok(any(h[0] == SID_A and h[1] for h in r["hits_a"]),
         "search still finds our archived turns (head print kept): %r" % r["hits_a"][:5])
    bad = {k: v for k, v in r["verify"].items() if v and k not in ("records",)}
    c.eq(bad, {}, "verify of A after ESP-Claw's compaction")
    c.ok("chat:web:u1:esp" not in r["chats"], "ESP-Claw's deleted alias gone from our chat ids")
    c.ok("The user plays chess on Sundays" in r["items"], "ours reads ESP-Claw's item")
    c.ok("The user's sister is called Ana" in r["items"], "our item survived ESP-Claw's boot compaction")
    # ESP-Claw once more, after our appends.
    esp = EspClaw(binary, root)
    a2 = tags(esp.messages(SID_A))
    c.ok(a2.count(("user", "o9")) == 1 and a2.count(("user", "e5")) == 1,
         "ESP-Claw reads our appended turns after its own, once: %r" % a2[-10:])
    log = esp.close()
    c.ok("Reinitializing" not in log and "Resetting" not in log, "no reset on the second boot")
    return c.failures


def _tag(row):
    role, content, cid, tid = row
    if role == "tool":
        return ("tool", tid[1:])
    if cid:
        return ("call", cid[1:])
    if role == "system":
        return ("system", "")
    return tuple(content.split()[:2])


def _name(sid):
    sys.path.insert(0, REPO)
    from claw_memory.session import file_name
    return file_name(sid)


def esp_first(binary, root, runtime):
    c = Check("esp_first/" + runtime)
    esp = EspClaw(binary, root)
    sid = esp("chat_sid", channel="web", chat_id="u1")["sid"]
    c.eq(sid, SID_A, "ESP-Claw's first session id")
    esp("chat_new", channel="web", chat_id="u1", alias="big")
    for i in range(8):
        esp.turn(SID_A, "a%d" % i, pad=30000)  # compacts in place past 150 KiB
    esp.turn("chat:web:u1:big", "b0", pad=160000)  # alone over the limit: blocked
    c.eq(esp("gate", sid="chat:web:u1:big")["err"], "ESP_ERR_INVALID_STATE", "ESP-Claw blocked big")
    esp("store", content="The user likes green tea", tags="drinks", keywords="tea")
    esp("store", content="The user has a cat named Miso", tags="pets", keywords="cat")
    first = tags(esp.messages(SID_A))
    esp.close()
    c.ok(("call", "a0") not in first and ("user", "a0") in first, "ESP-Claw compacted A: %r" % first)
    names = sorted(os.listdir(os.path.join(root, "sessions")))
    c.ok(any(n.endswith(".blocked") for n in names), "block marker: %r" % names)

    r = ours(root, """
a = S.messages(%r, tokens=0)
blocked = S.blocked("chat:web:u1:big")
try:
    S.persist("chat:web:u1:big", [(1, None, "user zz")])
    refused = False
except Exception:
    refused = True
turn(%r, "o0", pad=30000)
turn(%r, "o1", pad=30000)
hits = mem.search("o1 lookup", limit=10)
items = sorted(i["content"] for i in mem.store.list())
mem.store.store("The user runs on Mondays", tags="sport", keywords="running")
mem.close()
out(a=[m["role"] for m in a], n=len(a), blocked=blocked, refused=refused,
    hits=[h["text"][:16] for h in hits], items=items, notes=notes)
""" % (SID_A, SID_A, SID_A), runtime)[0]
    c.ok(r["blocked"] and r["refused"], "ours honours ESP-Claw's block marker")
    c.eq(r["items"], ["The user has a cat named Miso", "The user likes green tea"], "ours reads ESP-Claw's items")
    c.ok(any("o1" in h for h in r["hits"]), "ours searches its turns: %r" % r["hits"])
    esp = EspClaw(binary, root)
    a = tags(esp.messages(SID_A))
    for w in ["a%d" % i for i in range(8)] + ["o0", "o1"]:
        c.eq(a.count(("user", w)), 1, "ESP-Claw reads user %s once" % w)
        c.eq(a.count(("final", w)), 1, "ESP-Claw reads final %s once" % w)
    c.eq(a[-4:], [("user", "o1"), ("call", "o1"), ("tool", "o1"), ("final", "o1")], "ours last")
    errs = esp.turn(SID_A, "e9")
    c.eq(errs, ["ESP_OK"] * 3, "ESP-Claw appends after ours")
    lst = sorted(i["content"] for i in json.loads(esp("list")["json"]))
    c.ok("The user runs on Mondays" in lst, "ESP-Claw reads our item: %r" % lst)
    log = esp.close()
    c.ok("Reinitializing" not in log and "Resetting" not in log, "ESP-Claw reset nothing:\n" + log[-2000:])
    return c.failures


def same_bytes(binary, root, runtime):
    c = Check("bytes/" + runtime)
    ra, rb = root + "/esp", root + "/ours"
    os.makedirs(ra)
    esp = EspClaw(binary, ra)
    esp("chat_sid", channel="web", chat_id="u1")
    esp("chat_new", channel="web", chat_id="u1", alias="work")
    esp("chat_new", channel="web", chat_id="u1")
    esp("chat_switch", channel="web", chat_id="u1", alias="work")
    esp("chat_new", channel="web", chat_id="u9", alias="solo")  # a chat without a map yet
    esp("chat_new", channel="web", chat_id="u9")
    text = "h\u00e9llo \u4f60\u597d \"q\" \\ tab\there"
    esp("persist", sid=SID_A, records=[[1, None, text]], done=False)
    esp("persist", sid=SID_A, records=[[3, call("1"), None], [4, result("1", 5), None]], done=False)
    esp("persist", sid=SID_A, records=[[2, final("1"), None]], done=True)
    esp("persist", sid=SID_A, records=[[1, None, "x" * 5000]], done=False)
    esp("persist", sid=SID_A, records=[[2, None, "plain answer"]], done=True)
    esp("store", content="The user likes lettuce", tags="dietary, food ; greens", keywords="lettuce,salad")
    esp.close()
    ours(rb, """
mem.chats.session_id("web", "u1")
mem.session_command("web", "u1", "new work")
mem.session_command("web", "u9", "new solo")
mem.session_command("web", "u9", "new")
mem.session_command("web", "u1", "new")
mem.session_command("web", "u1", "switch work")
S.persist(%r, [(1, None, %r)])
S.persist(%r, [(3, call("1"), None), (4, result("1", 5), None)])
S.persist(%r, [(2, final("1"), None)], True)
S.persist(%r, [(1, None, "x" * 5000)])
S.persist(%r, [(2, None, "plain answer")], True)
mem.store.store("The user likes lettuce", tags="dietary, food ; greens", keywords="lettuce,salad")
mem.close()
""" % (SID_A, text, SID_A, SID_A, SID_A, SID_A), runtime)
    n = _name(SID_A)
    for suffix in ("", ".idx"):
        c.eq(_read(rb + "/sessions/" + n + suffix), _read(ra + "/sessions/" + n + suffix),
             "sessions/%s%s byte for byte" % (n, suffix))
    maps = sorted(os.listdir(ra + "/sessions/chat_map"))
    c.eq(sorted(os.listdir(rb + "/sessions/chat_map")), maps, "chat map names")
    for m in maps:
        c.eq(_read(rb + "/sessions/chat_map/" + m), _read(ra + "/sessions/chat_map/" + m), "chat map %s" % m)
    import re
    mask = lambda b: re.sub(rb'mem-\d+-\d{4}', b'ID', re.sub(rb'_at":\d+', b'_at":T', b))
    c.eq(mask(_read(rb + "/memory/memory_records.jsonl")), mask(_read(ra + "/memory/memory_records.jsonl")),
         "memory_records.jsonl (ids, times masked)")
    for f in ("soul.md", "identity.md", "user.md"):
        c.eq(_read(rb + "/memory/" + f), _read(ra + "/memory/" + f), "memory/%s default" % f)
    return c.failures


def port(binary, root, runtime):
    """Our Python port of ESP-Claw (tools/benchmark/baselines/espclaw.py, which the suite's
    hand-over tests use in place of the C code) against the C code: the same persists on two
    roots give the same files, and its request body is the C load's, for each backend."""
    c = Check("port/" + runtime)
    if runtime != "cpython":
        return []  # the port is run by the CPython side only here
    sys.path.insert(0, os.path.join(REPO, "tools", "benchmark", "baselines"))
    import espclaw
    rc, rp = root + "/c", root + "/port"
    os.makedirs(rp + "/sessions")
    sid = "chat:web:u1:default_01"
    anth = ('{"role":"assistant","content":[{"type":"text","text":"an "},{"type":"tool_use",'
            '"id":"t1","name":"x","input":{}},{"type":"text","text":"answer \u00e9"}]}')
    steps = [
        ("openai_compatible", [[1, None, "h\u00e9llo \u4f60\u597d \"q\" \\ t\tab \u0001"]], False),
        ("openai_compatible", [[3, call("1"), None], [4, result("1", 20), None]], False),
        ("openai_compatible", [[2, final("1"), None]], True),
        ("anthropic_compatible", [[1, None, "second"]], False),
        ("anthropic_compatible", [[3, anth, None], [4, result("t1"), None]], False),
        ("anthropic_compatible", [[2, anth, None]], True),
        ("", [[1, None, "x" * 5000]], False),
        ("", [[2, None, "y" * 10]], True),
    ]
    for i in range(9):  # past 150 KiB: compaction in place, then a block
        steps += [("openai_compatible", [[1, None, "big %d" % i]], False),
                  ("openai_compatible", [[3, call("b%d" % i), None], [4, result("b%d" % i, 25000), None]], False),
                  ("openai_compatible", [[2, final("b%d" % i), None]], True)]
    steps += [("openai_compatible", [[1, None, "huge"]], False),
              ("openai_compatible", [[3, call("h"), None], [4, result("h", 160000), None]], False),
              ("openai_compatible", [[2, final("h"), None]], True)]
    fmts = {"openai_compatible": 1, "anthropic_compatible": 2, "": 0}
    name = espclaw.file_name(sid)
    for k, (backend, recs, done) in enumerate(steps):
        esp = EspClaw(binary, rc, backend)
        got = esp("persist", sid=sid, records=recs, done=done)["err"]
        ps = espclaw.EspClawSessions(rp + "/sessions", backend_format=fmts[backend])
        try:
            ps.persist(sid, [tuple(r) for r in recs], done)
            want = "ESP_OK"
        except OSError:
            want = "ESP_ERR_INVALID_STATE"
        c.eq(want, got, "step %d: persist's outcome" % k)
        for suffix in ("", ".idx", ".blocked"):
            a, b = rc + "/sessions/" + name + suffix, rp + "/sessions/" + name + suffix
            c.eq(os.path.exists(b) and _read(b), os.path.exists(a) and _read(a),
                 "step %d: %s%s byte for byte" % (k, name, suffix))
        for fmt, be in ((1, "openai_compatible"), (2, "anthropic_compatible"), (0, "")):
            e2 = esp if be == backend else EspClaw(binary, rc, be)
            cj = e2("load", sid=sid)["json"]
            if e2 is not esp:
                e2.close()
            pj = espclaw.EspClawSessions(rp + "/sessions", backend_format=fmt).request_body(sid)
            c.eq(pj, cj, "step %d: the request body with backend %d" % (k, fmt))
        esp.close()
    return c.failures


def reset(binary, root, runtime):
    """Ours stops without close() (a reset, a firmware switch), its index a few turns behind
    the log; ESP-Claw's firmware answers turns on the session until it compacts it."""
    c = Check("reset/" + runtime)
    ours(root, """
mem.chats.session_id("web", "u1")
for i in range(3):
    turn(%r, "o%%d" %% i, pad=20000)
""" % SID_A, runtime)  # no close()
    esp = EspClaw(binary, root)
    seen = tags(esp.messages(SID_A))
    for w in ("e0", "e1", "e2", "e3", "e4", "e5"):
        esp.turn(SID_A, w, pad=30000)
    esp.close()
    r = ours(root, "out(t=[m['content'] for m in S.messages(%r, tokens=0) if m['role'] == 'user'])"
             % SID_A, runtime)[0]
    c.eq([("user", "o%d" % i) in seen for i in range(3)], [True] * 3,
         "ESP-Claw's request history holds every turn ours acknowledged")
    c.eq([t for t in r["t"] if t.startswith("user o")], ["user o0", "user o1", "user o2"],
         "ours' acknowledged turns survive ESP-Claw's compaction")
    return c.failures


SCENARIOS = {"ours_first": ours_first, "esp_first": esp_first, "bytes": same_bytes, "port": port,
             "reset": reset}
# Scenarios that fail for a known, open reason (the pytest test expects them to fail).
KNOWN = {"reset": "our .idx lags the log by up to 3 completed turns until close() (index_every=4,"
                  " a flash-wear choice): ESP-Claw's firmware does not replay them, and its "
                  "compaction (session_history_rewrite_compacted copies indexed entries only, "
                  "then ftruncate) destroys them"}


def run(names=None, runtimes=("cpython", "micropython"), src=None):
    """Build the harness and run the scenarios; returns the list of failures."""
    src = src or source()
    if not src:
        raise SystemExit("set CLAW_ESPCLAW_SRC to an ESP-Claw checkout (see the docstring)")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(src, tmp)
        for name in names or SCENARIOS:
            for rt in runtimes:
                root = os.path.join(tmp, "%s-%s" % (name, rt))
                os.makedirs(root)
                try:
                    failures += SCENARIOS[name](binary, root, rt)
                except Exception as e:  # noqa: BLE001 -- reported as a failure of the scenario
                    failures.append("%s/%s: %s: %s" % (name, rt, type(e).__name__, e))
                shutil.rmtree(root, ignore_errors=True)
    return failures


def main(argv):
    rts = ("cpython", "micropython")
    if "--runtime" in argv:
        i = argv.index("--runtime")
        rts = (argv[i + 1],)
        argv = argv[:i] + argv[i + 2:]
    fails = run(argv or None, rts)
    for f in fails:
        print("FAIL " + f)
    print("%d failure(s)" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
