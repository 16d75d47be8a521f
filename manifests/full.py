# FULL: LITE plus the long-term store, its tools and background extraction.
# No metadata(): a plain include() shares the including manifest's (manifestfile.py
# allows one per level); the umbrella manifest.py has it.
include("lite.py")
package(
    "claw_memory",
    files=(
        "extract.py",
        "item.py",
        "memory_text.py",
        "memory_tools.py",
        "provenance.py",
        "store/__init__.py",
        "store/batch.py",
        "store/catalog.py",
        "store/compact.py",
        "store/digest.py",
        "store/index.py",
        "store/load.py",
        "store/markdown.py",
        "store/rank.py",
        "store/read.py",
        "store/records.py",
        "store/state.py",
        "store/store.py",
        "store/table.py",
        "store/undo.py",
    ),
    base_path="..",
)
