"""The query commands: `claw-memory recall` (the long-term items most relevant to a query,
ranked, with scores) and `claw-memory search` (the session history's records, archives
included, that best match a query)."""

from claw_memory.text import shown

from . import roots
from .ui import EXIT_OK, EXIT_PROBLEMS, CliError, EXIT_USAGE, emit_json, no_session, table


def register(sub, root_args, with_copy):
    """Add the `recall` command; `root_args` and `with_copy` are main's (ROOT or -p PORT,
    and running on a read-only copy of the data root)."""

    def cmd(args):
        from claw_memory import inspect as insp
        from claw_memory import messages

        roots.lone_word(args, "query")
        if not args.query:
            raise CliError("give the query text: claw-memory recall ROOT \"query\"", EXIT_USAGE)
        if args.limit < 1:
            raise CliError("--limit must be 1 or more", EXIT_USAGE)

        def run(mem, where):
            if mem.store is None:
                raise CliError("%s is a LITE data root: it has no long-term items" % where, EXIT_PROBLEMS)
            rows = insp.recall(args.query, args.limit, rows=True, mem=mem)
            if args.json:
                emit_json({"root": where, "query": args.query, "items": rows})
                return EXIT_OK
            print("data root: %s, query: %s" % (where, shown(args.query)))
            table([dict(r, content=messages.cell(r["content"], 80)) for r in rows],
                  ("id", "score", "labels", "content"), "ranked recall (best first)")
            return EXIT_OK

        return with_copy(args, run)

    d = sub.add_parser("recall", help="the long-term items most relevant to a query, with scores")
    root_args(d)
    d.add_argument("query", nargs="?", metavar="QUERY", help="free text, as a user would ask")
    d.add_argument("--limit", type=int, default=8, metavar="N", help="at most N items (default 8)")
    d.set_defaults(func=cmd)


def register_search(sub, root_args, with_copy):
    """Add the `search` command (as `register`)."""

    def cmd(args):
        from claw_memory import inspect as insp
        from claw_memory import messages

        roots.lone_word(args, "query")
        if not args.query:
            raise CliError("give the query text: claw-memory search ROOT \"query\"", EXIT_USAGE)
        if not 1 <= args.limit <= 50:
            raise CliError("--limit must be 1..50", EXIT_USAGE)

        def run(mem, where):
            try:
                rows = insp.search(args.query, args.limit, args.session, rows=True, mem=mem)
            except ValueError as e:
                if not str(e).startswith("no session"):
                    raise CliError(str(e), EXIT_USAGE)
                raise no_session(args, where)
            if args.json:
                emit_json({"root": where, "query": args.query, "session": args.session,
                           "hits": rows})
                return EXIT_OK
            # (the query and id as data: escape sequences in them are not the terminal's)
            print("data root: %s, query: %s%s" % (where, shown(args.query),
                                                  ", session: %s" % shown(args.session) if args.session else ""))
            from claw_memory.session.hits import excerpt, query_words  # (the part of a long text about the query)
            from claw_memory.session.search import query_hashes

            if not rows and not query_hashes(args.query):
                print("(the query has no word to search for: only common words, punctuation or symbols)")
                return EXIT_OK

            words = query_words(args.query)
            table([dict(r, text=messages.cell(excerpt(r["text"], words, 80), 80)) for r in rows],
                  ("session", "role", "archived", "score", "text"), "history search (best first)")
            return EXIT_OK

        return with_copy(args, run)

    d = sub.add_parser("search", help="the session history's records (archives included) that "
                       "best match a query")
    root_args(d)
    d.add_argument("query", nargs="?", metavar="QUERY", help="a few words: names, places, numbers")
    d.add_argument("--session", metavar="ID", help="one session's (its id), not the whole root")
    d.add_argument("--limit", type=int, default=5, metavar="N", help="at most N hits (default 5)")
    d.set_defaults(func=cmd)
