# On the board: the REPL inspection helpers print their tables.
from devtest_config import ROOT

from claw_memory import inspect

rows = inspect.sessions(ROOT)
assert len(rows) == 1 and rows[0]["records"] == 10, rows
hist = inspect.history("chat:devtest:board:default_01", 4, ROOT)
assert hist[-1]["text"] == "You are allergic to peanuts.", hist
assert len(inspect.items(ROOT)) == 2
assert [l["label"] for l in inspect.labels(ROOT)] == ["city", "health"]
assert inspect.profile(ROOT)[0]["name"] == "user"
layers = {r["layer"]: r for r in inspect.stats(ROOT)}
assert layers["sessions"]["records"] == 10 and layers["long-term"]["records"] == 2, layers
print("DEVTEST PASS inspect")
