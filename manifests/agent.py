# The reference agent loop and the LLM clients; the only piece that needs aiohttp. Add it to
# lite.py or full.py (or use the umbrella manifest.py, which has all three).
metadata(description="claw_memory agent loop and LLM clients (aiohttp)", version="0.1.0",
         license="MIT")
require("aiohttp")
package("claw_memory", files=("agent.py", "llm.py"), base_path="..")
