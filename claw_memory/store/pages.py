# claw_memory.store.pages: short byte strings kept in small fixed pages.
# MIT license
#
# A chip's heap is fragmented, and MicroPython collects garbage only when the heap is full:
# objects that live as long as the store, allocated one by one during the scan of the
# records file, end up spread among its garbage (measured: after a scan, 105 KiB free and no
# free block over 5 KiB). So data that lives as long as the store (the dedupe
# normalisations, the catalog's labels) goes in 1 KiB pages, reserved in one go before the
# scan where possible (the unused ones are given back after it), instead of one growing blob.

from .._compat import const

PAGE = const(1024)


class Pages:
    def __init__(self, reserve=0):
        """`reserve`: bytes expected, allocated now as pages side by side."""
        self.pages = [bytearray(PAGE) for _ in range((reserve + PAGE - 1) // PAGE)]
        self.cur = 0  # the page being filled
        self.used = 0  # bytes used in it

    def add(self, data):
        """Store `data` (at most PAGE bytes) whole in one page; returns its handle."""
        n = len(data)
        if self.used + n > PAGE or not self.pages:
            if self.pages and self.used:
                self.cur += 1
            self.used = 0
            if self.cur >= len(self.pages):
                self.pages.append(bytearray(PAGE))
        page = self.pages[self.cur]
        at = self.used
        page[at : at + n] = data
        self.used += n
        return self.cur * PAGE + at

    def size(self):
        """Bytes used, garbage included."""
        return self.cur * PAGE + self.used

    def release(self):
        """Give back the reserved pages not used."""
        del self.pages[self.cur + 1 :]

    def blank(self, handle, n):
        """Overwrite the n bytes at `handle` with NUL."""
        page = self.pages[handle // PAGE]
        at = handle % PAGE
        for k in range(at, at + n):
            page[k] = 0

    def get(self, handle, n):
        page = self.pages[handle // PAGE]
        at = handle % PAGE
        return bytes(page[at : at + n])

    def find(self, needle, handle, n):
        """Offset of `needle` in the n bytes at `handle`, or -1."""
        page = self.pages[handle // PAGE]
        at = handle % PAGE
        i = page.find(needle, at, at + n)
        return -1 if i < 0 else i - at

    def search(self, needle):
        """The handle of the first occurrence of `needle` within one page, or -1."""
        for p in range(min(self.cur + 1, len(self.pages))):
            i = self.pages[p].find(needle, 0, self.used if p == self.cur else PAGE)
            if i >= 0:
                return p * PAGE + i
        return -1
