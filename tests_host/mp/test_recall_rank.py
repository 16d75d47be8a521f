# Ranked recall (store/rank.py): BM25 scores on a small corpus computed by hand, CJK and mixed
# text, stemming both ways, ties, near-duplicates, and forgotten, superseded and evicted items
# never returned (after a reboot and after an ESP-Claw hand-over too). Expected scores are
# written out, never computed with the code under test.
import json

from flashsim import mount
from mptest import Clock, eq, ok

import claw_memory
from claw_memory.store import Store

HEAP = "8M"
M = "/flash/memory"
UNSET = 1000  # a board clock that was never set: no recency factor


def _mem(t=UNSET):
    mount("lfs2", "/flash", blocks=256)
    clock = Clock(t)
    return claw_memory.open("/flash", clock=clock), clock


def _hits(mem, query, limit=8):
    return [(it["content"], it["score"]) for it in mem.store.recall(limit=limit, query=query)]


def _corpus(mem):
    # A: user like green tea + drink (tag, keyword, label): 7 terms, drink 3 times.
    # B: user dog max like walk + pet x3: 8 terms.  C: green tea jasmine + drink x3: 6 terms.
    mem.store.store("User likes green tea", "drink")
    mem.store.store("User's dog Max likes walks", "pet")
    mem.store.store("Green tea with jasmine", "drink")


def test_scores_of_a_hand_computed_corpus():
    # N = 3, average length 7, k1 1.2, b 0.75; idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
    # "green tea": df 2 each, idf ln 1.6 = 0.470004.
    #   A (length 7): 2 x 0.470004 x 2.2 / (1 + 1.2) = 0.9400
    #   C (length 6): 2 x 0.470004 x 2.2 / (1 + 1.2 x (0.25 + 0.75 x 6/7)) = 0.9984
    # "drink" (tf 3): A 0.470004 x 3 x 2.2 / (3 + 1.2) = 0.7386; C ... / (3 + 1.071429) = 0.7619
    # "walking dogs": df 1 each, idf ln(8/3) = 0.980829; B (length 8): 2 x 0.980829 x 2.2 /
    #   (1 + 1.2 x (0.25 + 0.75 x 8/7)) = 1.8533
    mem, _ = _mem()
    _corpus(mem)
    eq(_hits(mem, "green tea"), [("Green tea with jasmine", 0.9984), ("User likes green tea", 0.94)])
    eq(_hits(mem, "drink"), [("Green tea with jasmine", 0.7619), ("User likes green tea", 0.7386)])
    eq(_hits(mem, "walking dogs"), [("User's dog Max likes walks", 1.8533)])
    eq(_hits(mem, "the and of"), [], "stop words only: nothing")
    eq(_hits(mem, "violin"), [], "no term in common: nothing")
    eq(_hits(mem, "green tea", limit=1), [("Green tea with jasmine", 0.9984)])
    # Forgetting C: N 2, average 7.5, "green tea" df 1, idf ln(8/3):
    # A: 2 x 0.980829 x 2.2 / (1 + 1.2 x (0.25 + 0.75 x 7/7.5)) = 1.4252
    c = [it for it in mem.store.list() if it["content"].startswith("Green")][0]
    mem.store.forget(c["id"])
    eq(_hits(mem, "green tea"), [("User likes green tea", 1.4252)])
    mem.close()


def test_recency_factor_when_the_clock_is_set():
    # Same text, one updated 30 days before the other: x1.05 and x1.1 of one BM25 score.
    mem, clock = _mem(1714000000)
    mem.store.store("User plays chess on Mondays", "games")
    clock.t += 30 * 86400
    mem.store.store("User plays chess on Fridays", "games")
    got = _hits(mem, "mondays fridays chess")
    eq([c for c, _ in got], ["User plays chess on Fridays", "User plays chess on Mondays"])
    eq(round(got[0][1] / got[1][1], 3), round(1.1 / 1.05, 3), "the 30-day half-life")
    mem.close()


def test_labels_filter_and_the_query_ranks():
    mem, _ = _mem()
    _corpus(mem)
    got = mem.store.recall(["drink"], query="tea jasmine")
    eq([it["content"] for it in got], ["Green tea with jasmine", "User likes green tea"])
    ok(all(it["score"] > 0 for it in got), "scored")
    eq(mem.store.recall(["pet"], query="tea"), [], "the label filter holds")
    eq(mem.store.recall(["nope"], query="tea"), [], "an unknown label: nothing")
    eq([it["content"] for it in mem.store.recall(["pet"])], ["User's dog Max likes walks"])
    ok("score" not in mem.store.recall(["pet"])[0], "no query: no score")
    mem.close()


def test_cjk_and_mixed_text():
    mem, _ = _mem()
    mem.store.store("用户喜欢喝绿茶", "偏好")
    mem.store.store("用户住在上海浦东", "城市")
    mem.store.store("User bought a 4K TV in 東京 last week", "shopping")
    eq([c for c, _ in _hits(mem, "我喜欢什么茶？绿茶吗")], ["用户喜欢喝绿茶"])
    eq([c for c, _ in _hits(mem, "上海")], ["用户住在上海浦东"])
    eq([c for c, _ in _hits(mem, "東京")], ["User bought a 4K TV in 東京 last week"])
    eq([c for c, _ in _hits(mem, "what 4k tv")], ["User bought a 4K TV in 東京 last week"])
    eq([c for c, _ in _hits(mem, "who lives where 住在哪里")], ["用户住在上海浦东"])
    mem.close()


def test_stemming_both_ways():
    mem, _ = _mem()
    mem.store.store("User walked the dogs every morning", "pets")
    mem.store.store("User loves running marathons", "sport")
    eq([c for c, _ in _hits(mem, "walking dog")], ["User walked the dogs every morning"])
    eq([c for c, _ in _hits(mem, "mornings walks")], ["User walked the dogs every morning"])
    eq([c for c, _ in _hits(mem, "does he run a marathon")], ["User loves running marathons"])
    eq([c for c, _ in _hits(mem, "walk")], ["User walked the dogs every morning"], "and back")
    mem.close()


def test_ties_access_count_then_the_newer_line():
    mem, _ = _mem()
    red, _ = mem.store.store("User owns a red bike", "bikes")
    blue, _ = mem.store.store("User owns a blue bike", "bikes")
    got = _hits(mem, "bike")
    eq(got[0][1], got[1][1], "same score")
    eq([c for c, _ in got], ["User owns a blue bike", "User owns a red bike"], "the newer line first")
    # red recalled more often: its access count (folded in by a compaction) breaks the tie
    for _ in range(3):
        eq(len(mem.store.recall(["bikes"], limit=1)), 1, "recalled")
    mem.store.recall(["bikes"])
    mem.store.compact()
    by_id = {it["id"]: it["access_count"] for it in mem.store.list()}
    first = red["id"] if by_id[red["id"]] > by_id[blue["id"]] else blue["id"]
    ok(by_id[red["id"]] != by_id[blue["id"]], "the counts differ")
    eq(mem.store.recall(query="bike")[0]["id"], first, "the more recalled first")
    mem.close()


def test_near_duplicates_are_returned_once():
    mem, _ = _mem()
    # 8 terms each, 7 in common (at least 0.85 of them): near-duplicates
    mem.store.store("User really likes drinking green tea every day", "tea")
    mem.store.store("User likes drinking green tea every day a lot", "tea")
    mem.store.store("User likes green apples", "food")
    got = [c for c, _ in _hits(mem, "green")]
    eq(len(got), 2, "one of the two near-duplicates, and the apples: %r" % (got,))
    ok("User likes green apples" in got, "the apples")
    mem.close()


def test_forgotten_superseded_and_evicted_never_returned():
    dev = mount("lfs2", "/flash", blocks=256)
    clock = Clock(1714000000)
    s = Store(M, clock=clock, max_active=3)
    gone, _ = s.store("User's locker code is 4711", "secrets")
    s.forget(gone["id"])
    old, _ = s.store("User lives in Lisbon near the harbour", "city")
    s.update(old["id"], content="User lives in Porto near the river")
    clock.t += 1
    s.store("User likes kites", "hobby")
    clock.t += 1
    s.store("User likes harbour boats", "hobby")
    clock.t += 1
    s.store("User likes harbour cranes", "hobby")  # over 3: the oldest (Porto) is evicted
    contents = sorted(it["content"] for it in s.list())
    eq(contents, ["User likes harbour boats", "User likes harbour cranes", "User likes kites"])

    def check(st):
        for q in ("locker code 4711", "Lisbon harbour", "Porto river", "secrets city"):
            for it in st.recall(query=q, limit=8):
                ok(it["content"] in contents, "%r returned for %r" % (it["content"], q))
        eq(st.recall(query="4711"), [], "forgotten")
        eq(st.recall(query="Lisbon"), [], "superseded")
        eq(st.recall(query="Porto"), [], "evicted")

    check(s)
    s.close()
    dev = dev.reboot()
    check(Store(M, clock=clock, max_active=3))


def test_an_espclaw_hand_over():
    # ESP-Claw's records: its update rewrites the same id; its forget appends deleted:true.
    mount("lfs2", "/flash", blocks=256)
    import os

    os.mkdir(M)

    def line(mid, content, tags, deleted=False, t=1714000000):
        return json.dumps({"id": mid, "source": "manual", "content": content, "tags": tags,
                           "keywords": tags, "created_at": t, "updated_at": t, "access_count": 0,
                           "deleted": deleted, "summary_ids": [1]}) + "\n"

    with open(M + "/memory_records.jsonl", "w") as f:
        f.write(line("mem-1", "User studies Japanese", "study"))
        f.write(line("mem-2", "User drives a green van", "study"))
        f.write(line("mem-1", "User studies Korean now", "study", t=1714000100))
        f.write(line("mem-2", "User drives a green van", "study", True, 1714000200))
        f.write(line("mem-3", "User studies piano", "study"))
    mem = claw_memory.open("/flash", clock=Clock())
    eq([it["id"] for it in mem.store.recall(query="studies")], ["mem-3", "mem-1"], "shorter first")
    eq(mem.store.recall(query="Japanese"), [], "the rewritten line's old text")
    eq(mem.store.recall(query="green van"), [], "forgotten by ESP-Claw")
    eq([it["content"] for it in mem.store.recall(query="korean")], ["User studies Korean now"])
    mem.close()


def test_statistics_follow_changes_as_a_fresh_open_sees_them():
    mem, clock = _mem(1714000000)
    ids = []
    for n in range(40):
        it, _ = mem.store.store("User fact %d about topic%d and colour %s" % (n, n % 7, "red" if n % 3 else "blue"),
                                "t%d" % (n % 5))
        ids.append(it["id"])
        clock.t += 60
    for n in range(0, 40, 4):
        mem.store.update(ids[n], content="User changed fact %d to colour green" % n)
    for n in range(1, 40, 5):
        if n % 4:
            mem.store.forget(ids[n])
    queries = ("colour red", "green", "topic3 fact", "t2 blue", "fact 17")
    live = [[(it["id"], it["score"]) for it in mem.store.matches(q, 16)] for q in queries]
    fresh = Store(M, clock=clock)
    eq([[(it["id"], it["score"]) for it in fresh.matches(q, 16)] for q in queries], live)
    ok(all(live), "every query matched")
    mem.close()


def test_matches_has_a_floor_and_writes_nothing():
    mem, _ = _mem()
    _corpus(mem)
    digest = mem.store.digest_path
    before = _size(digest)
    # the unit: one word in one of 3 items, ln(1 + 2.5 / 1.5) = 0.9808; 1.5 units: 1.4712
    eq([it["content"] for it in mem.store.matches("walking dogs", 5, 1.5)], ["User's dog Max likes walks"])
    eq(mem.store.matches("green tea", 5, 1.5), [], "below the floor (0.9984)")
    eq(len(mem.store.matches("green tea", 5, 1.0)), 1, "1 unit: the jasmine only (0.9984 > 0.9808 > 0.94)")
    eq(mem.store.matches(None, 5), [], "no text")
    eq(_size(digest), before, "no recall lines")
    mem.close()


def _size(path):
    import os

    try:
        return os.stat(path)[6]
    except OSError:
        return -1


def test_a_word_every_item_has_does_not_bring_them_all():
    # "user" is in all four (idf ln(1 + 0.5 / 4.5) = 0.105): under a quarter of the best
    mem, _ = _mem()
    mem.store.store("User lives in Osaka near the castle", "city")
    mem.store.store("User likes sushi", "food")
    mem.store.store("User drinks green tea", "drink")
    mem.store.store("User owns a bike", "sport")
    eq([c for c, _ in _hits(mem, "where does the user live?")], ["User lives in Osaka near the castle"])
    eq(len(_hits(mem, "user")), 4, "alone it is the best there is")
    mem.close()
