# The LLM clients (OpenAI chat completions, OpenAI Responses, Anthropic) with their
# transport and CA bundles, on LITE: the only piece that needs aiohttp.
# No metadata(): a plain include() shares the including manifest's (manifestfile.py
# allows one per level); the umbrella manifest.py has it.
include("lite.py")
require("aiohttp")
package(
    "claw_memory",
    files=(
        "llm/__init__.py",
        "llm/answer.py",
        "llm/base.py",
        "llm/certs.py",
        "llm/clients.py",
        "llm/transport.py",
    ),
    base_path="..",
)
