# A streamed history element for the tests (MicroPython and CPython): it implements the
# protocol of claw_memory.llm.transport.Body (json_length / json_chunks) over a list of message
# dicts, converted to the backend's wire shape by the client's own conversion functions, and
# hands the bytes out in small pieces.
from claw_memory import wire


class StreamedHistory:
    def __init__(self, messages, piece=7):
        self.messages = messages
        self.piece = piece
        self.chunks_calls = 0

    def wire(self, backend):
        return wire.convert(self.messages, backend)

    def _text(self, backend):
        return b",".join(wire.dump(w).encode() for w in self.wire(backend))

    def json_length(self, backend):
        return len(self._text(backend))

    def json_chunks(self, backend):
        self.chunks_calls += 1
        t = self._text(backend)
        for i in range(0, len(t), self.piece):
            yield t[i : i + self.piece]


class LyingHistory(StreamedHistory):
    """Announces one byte more (or less) than it writes."""

    def __init__(self, messages, delta=1):
        super().__init__(messages)
        self.delta = delta

    def json_length(self, backend):
        return super().json_length(backend) + self.delta
