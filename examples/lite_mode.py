# LITE mode: the profile documents and MEMORY.md (the user's own document, injected whole)
# plus session history. No long-term store, no memory tools, no extraction: the smallest
# footprint. Prints what a request's context gets from each provider.
#
#     MICROPYPATH=.frozen:. .venv/bin/micropython examples/lite_mode.py [DATA_ROOT]
#     .venv/bin/python examples/lite_mode.py [DATA_ROOT]
import sys

import claw_memory
from claw_memory.core import Request

root = sys.argv[1] if len(sys.argv) > 1 else "lite_data"
mem = claw_memory.open(root, mode="lite")
mem.profile.write("user", "# User\n\nName: Ada. Prefers short answers.\n")
with open(mem.md_path(), "w") as f:  # MEMORY.md is the user's to edit in LITE mode
    f.write("# Long-term Memory\n\n- Ada is allergic to peanuts.\n- Ada lives in Porto.\n")

sid = mem.chats.session_id("web", "ada")
mem.sessions.persist(sid, [(1, None, "Hello!")])
mem.sessions.persist(sid, [(2, None, "Hi Ada, how can I help?")], turn_completed=True)

request = Request("What should I cook tonight?", sid, "web", "ada")
for provider in mem.providers():
    body = provider.collect(request)
    print("== %s ==" % provider.name)
    if isinstance(body, list):
        for part in body:  # the history comes as one element, streamed into the request
            for m in part.messages() if hasattr(part, "messages") else [part]:
                print("%s: %s" % (m["role"], m["content"]))
    else:
        print(body or "(nothing)")
print("== tools ==")
print(", ".join(t.name for t in mem.tools()))
mem.close()
