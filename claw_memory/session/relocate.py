# claw_memory.session.relocate: the text indexes' folder made, once per data root, with the
# indexes an older version kept beside the logs moved into it.
# MIT license
#
# Loaded only when the folder is missing (a new data root, ESP-Claw's, an older version's).

import os

from .. import fsutil
from .._compat import ilistdir
from . import format as fmt_


def make(directory):
    """Make the folder of the sessions folder `directory`'s text indexes
    (`format.index_dir`). Indexes in `directory` itself (where versions before it kept them)
    are moved into it (each copied whole, then removed), their unfinished rewrites removed.
    The files go into a folder of a temporary name renamed at the end: a power cut leaves
    the move to be done again."""
    ixd = fmt_.index_dir(directory)
    tmp = ixd + fsutil.TMP
    fsutil.makedirs(tmp)
    names = []  # (collected first: a folder is not changed while it is listed)
    if fsutil.is_dir(directory):
        for name, is_dir, _ in ilistdir(directory):
            if not is_dir and (name.endswith(fmt_.TIX) or name.endswith(fmt_.TIX + fsutil.TMP)):
                names.append(name)
    for name in names:
        src = directory + "/" + name
        if name.endswith(fmt_.TIX):
            # Copied, not renamed: littlefs renames across folders in two commits, and a
            # cut between them hid a neighbour of the old name (a log) until its next write.
            fsutil.wrote(tmp + "/" + name)
            with open(src, "rb") as f, open(tmp + "/" + name, "wb") as g:
                out = fsutil.Buffered(g)
                out.copy(f, 0, f.seek(0, 2))
                out.flush()
        fsutil.remove(src)
    fsutil.wrote(ixd)
    os.rename(tmp, ixd)
