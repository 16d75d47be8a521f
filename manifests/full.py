# FULL: LITE plus the long-term store, its tools and background extraction.
metadata(description="claw_memory, FULL mode: LITE plus the long-term store", version="0.1.0",
         license="MIT")
include("lite.py")
package(
    "claw_memory",
    files=(
        "extract.py",
        "item.py",
        "memory_tools.py",
        "store/__init__.py",
        "store/compact.py",
        "store/digest.py",
        "store/index.py",
        "store/keywords.py",
        "store/markdown.py",
        "store/records.py",
        "store/store.py",
    ),
    base_path="..",
)
