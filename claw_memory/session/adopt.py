# claw_memory.session.adopt: the text index an earlier build kept beside its file (in the
# sessions folder) moved into the text indexes' folder.
# MIT license
#
# Loaded only when a file's index is missing from the folder and one lies beside the file
# (indexer.update): installed as .mpy, a module's bytecode lives in the heap.

import os

from .. import fsutil
from . import format as fmt_


def adopt(path, ipath):
    """Move the text index an earlier build kept beside `path` (`<path>.tix`) to `ipath`,
    its folder made first; True when there was one. Copied to `ipath`'s `.tmp`, the old one
    removed, then renamed: a cut leaves the old one, or none (made again: derived). Not
    renamed across the folders: littlefs does that in two commits, and a cut between them
    was seen to hide the log beside the old name until the next write (a search took it
    for deleted). One that cannot be copied is dropped and made again."""
    old = path + fmt_.TIX
    try:
        f = fsutil.open_existing(old)
        if f is None:
            return False
        with f:
            fsutil.write_tmp(ipath, lambda out: out.copy(f, 0, f.seek(0, 2)))
        done = True
    except OSError:  # (unreadable, or no room for the copy: dropped, made again from its file)
        done = False
    for p in (old + fsutil.TMP, old) if done else (ipath + fsutil.TMP, old + fsutil.TMP, old):
        try:  # (a rewrite a cut left too)
            fsutil.remove(p)
        except OSError:  # (one that cannot be removed is left to a repair: never read)
            pass
    if done:
        fsutil.wrote(ipath)
        os.rename(ipath + fsutil.TMP, ipath)
    return done
