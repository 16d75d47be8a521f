"""`claw-memory why`: where a long-term memory came from (its provenance)."""

from . import roots
from .ui import EXIT_PROBLEMS, EXIT_OK, EXIT_USAGE, CliError, emit_json


def register(sub, root_args, with_copy):
    """Add the `why` command; `root_args` and `with_copy` are main's (ROOT or -p PORT, and
    running on a read-only copy of the data root)."""

    def cmd(args):
        from claw_memory import inspect as insp
        from claw_memory.memory_text import why as words
        from claw_memory.text import shown

        roots.lone_word(args, "memory_id")
        if not args.memory_id:
            raise CliError("give the memory id: claw-memory why ROOT mem-...", EXIT_USAGE)

        def run(mem, where):
            if mem.store is None:
                raise CliError("%s is a LITE data root: it has no long-term items" % where, EXIT_PROBLEMS)
            report = insp.why(args.memory_id, rows=True, mem=mem)
            if report is None:
                raise CliError("no memory %s in the records of %s" % (args.memory_id, where), EXIT_PROBLEMS)
            if args.json:
                emit_json({"root": where, "why": report})
            else:
                print("data root: %s\n%s" % (where, shown(words(report, args.memory_id), True)))
            return EXIT_OK

        return with_copy(args, run)

    d = sub.add_parser("why", help="where a long-term memory came from: the message it was stored from")
    root_args(d)
    d.add_argument("memory_id", nargs="?", metavar="MEMORY_ID", help="the memory's id (mem-...)")
    d.set_defaults(func=cmd)
