# On the board: the REPL inspection helpers print their tables and return None; rows=True
# returns the data.
from devtest_config import ROOT

from claw_memory import inspect

SID = "chat:devtest:board:default_01"

assert inspect.sessions(ROOT) is None
rows = inspect.sessions(ROOT, rows=True)
assert len(rows) == 1 and rows[0]["records"] == 10 and rows[0]["id"] == SID, rows
assert inspect.history(root=ROOT) is None  # the latest session
hist = inspect.history(SID, 4, ROOT, rows=True)
assert hist[-1]["text"] == "You are allergic to peanuts.", hist
assert inspect.history(rows[0]["file"], 4, ROOT, rows=True) == hist
assert len(inspect.items(ROOT, rows=True)) == 2
assert [l["label"] for l in inspect.labels(ROOT, rows=True)] == ["city", "health"]
assert inspect.profile(ROOT, rows=True)[0]["name"] == "user"
st = inspect.stats(ROOT, rows=True)
layers = {r["layer"]: r for r in st["layers"]}
assert layers["sessions"]["records"] == 10 and layers["long-term"]["records"] == 2, layers
assert [s["id"] for s in st["sessions"]] == [SID] and st["sessions"][0]["tokens"] > 0, st
inspect.stats(ROOT)
print("DEVTEST PASS inspect")
