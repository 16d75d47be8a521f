# The reference agent loop (claw_core's order), on LITE: it needs no aiohttp. Add full.py for
# the long-term store and llm.py for the LLM clients (the umbrella manifest.py has all).
# No metadata(): a plain include() shares the including manifest's (manifestfile.py
# allows one per level); the umbrella manifest.py has it.
include("lite.py")
package("claw_memory", files=("agent.py",), base_path="..")
