"""`claw-memory recall`: the long-term items most relevant to a query, ranked, with scores."""

from .ui import EXIT_OK, CliError, EXIT_USAGE, emit_json, table


def register(sub, root_args, with_copy):
    """Add the `recall` command; `root_args` and `with_copy` are main's (ROOT or -p PORT,
    and running on a read-only copy of the data root)."""

    def cmd(args):
        from claw_memory import inspect as insp
        from claw_memory import messages

        if args.query is None and args.port and args.root is not None:
            args.query, args.root = args.root, None  # `recall -p PORT "query"`
        if not args.query:
            raise CliError("give the query text: claw-memory recall ROOT \"query\"", EXIT_USAGE)

        def run(mem, where):
            rows = insp.recall(args.query, args.limit, rows=True, mem=mem)
            if args.json:
                emit_json({"root": where, "query": args.query, "items": rows})
                return EXIT_OK
            print("data root: %s, query: %s" % (where, args.query))
            table([dict(r, content=messages.cell(r["content"], 80)) for r in rows],
                  ("id", "score", "labels", "content"), "ranked recall (best first)")
            return EXIT_OK

        return with_copy(args, run)

    d = sub.add_parser("recall", help="the long-term items most relevant to a query, with scores")
    root_args(d)
    d.add_argument("query", nargs="?", metavar="QUERY", help="free text, as a user would ask")
    d.add_argument("--limit", type=int, default=8, metavar="N", help="at most N items (default 8)")
    d.set_defaults(func=cmd)
