# Freeze claw_memory (and the aiohttp its LLM clients need) into firmware, or compile it with
# manifestfile.py. The pieces in manifests/ select files: lite.py (profile, MEMORY.md,
# session history), full.py (lite plus the long-term store), agent.py (lite plus the agent
# loop), llm.py (lite plus the LLM clients; requires aiohttp). Each piece includes what it
# needs (manifestfile.py runs an included manifest once). json is built into every
# firmware: never require("json").
metadata(description="Persistent memory for on-device LLM agents", version="0.1.0", license="MIT")
include("manifests/full.py")
include("manifests/agent.py")
include("manifests/llm.py")
