# Freeze claw_memory (and the aiohttp it needs) into firmware, or compile it with
# manifestfile.py. json is built into every firmware: never require("json").
metadata(description="Persistent memory for on-device LLM agents", version="0.1.0", license="MIT")
require("aiohttp")
package("claw_memory")
