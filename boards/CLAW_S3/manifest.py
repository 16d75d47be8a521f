# Frozen into the CLAW_S3 firmware (set as MICROPY_FROZEN_MANIFEST by mpconfigboard.cmake).
# No metadata() here: the repository manifest has it at its own level.

# _boot.py, flashbdev, inisetup, asyncio, networking...: without it the filesystem is never mounted.
include("$(PORT_DIR)/boards/manifest.py")

# The repository's manifest.py (boards/CLAW_S3/../../ is the repository root): every piece
# of claw_memory in manifests/, and aiohttp, which manifests/llm.py requires.
include("$(BOARD_DIR)/../../manifest.py")
