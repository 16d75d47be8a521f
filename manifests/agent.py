# The reference agent loop and the LLM clients; the only piece that needs aiohttp. Add it to
# lite.py or full.py (or use the umbrella manifest.py, which has all three).
# No metadata(): a plain include() shares the including manifest's (manifestfile.py
# allows one per level); the umbrella manifest.py has it.
require("aiohttp")
package("claw_memory", files=("agent.py", "llm.py"), base_path="..")
