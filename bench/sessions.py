"""Session store benchmarks.

    python bench/sessions.py [--entries N] [--runs R] [--appends A] [--dir DIR]

1. Load: a session of N entries (default 100,000: a realistic mix of user
   prompts, assistant messages with thinking + text + tool calls + usage, and
   tool results of a few hundred bytes), loaded by ``read_session`` (parse,
   validate, walk the parent chain, build ``Message`` objects) against a bare
   ``json.loads`` loop over the lines of the same file.  Target: ratio <= 2.
2. Listing: ``list_sessions`` (``panto sessions``, the ``--resume`` picker)
   over the same file, against the same bare loop.
3. Append: the median latency of appending one message with
   ``durability="fsync"`` (one write + fdatasync), next to "flush" and
   "none", on the file system of ``--dir`` (default: a temp dir).
4. The tree: a session of N entries that branches every few hundred entries
   (each branch restarts a few turns back), loaded at its current leaf:
   ratio to the bare loop over the whole file, and the memory the loaded
   path keeps (tracemalloc) next to that of the linear session.
5. Backends: the same N-entry session imported into SQLite and PostgreSQL
   (``--postgres URL``, default ``$PANTO_TEST_POSTGRES_URL``; skipped without
   one), loaded per backend, and the append latency (median, p99) with
   durability "fsync", all as ratios to the JSONL store.

Prints medians of R interleaved runs (default 7).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    import panto  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from panto.conversation import Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from panto.sessions import FSJSONLStore, list_sessions, open_backend, read_session

WORDS = (
    "the a file test parser error fix function return value line module class "
    "import python panto session store append load json entry message tool"
).split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_rounds(n_entries: int, seed: int = 7) -> list[list[Message]]:
    """Batches as the agent writes them, ``n_entries`` messages in all."""
    rng = random.Random(seed)
    out: list[list[Message]] = []
    total = 0
    i = 0
    while total < n_entries:
        i += 1
        kind = i % 3
        if kind == 1:
            batch = [Message.user(_text(rng, rng.randint(5, 60)))]
        elif kind == 2:
            blocks: list[object] = [
                Thinking(_text(rng, rng.randint(10, 80)), "sig-" + "A" * 64),
                Text(_text(rng, rng.randint(5, 50))),
            ]
            if rng.random() < 0.7:
                blocks.append(
                    ToolUse(f"toolu_{i:08d}", "bash", {"command": _text(rng, 6), "timeout": 30})
                )
            batch = [
                Message(
                    "assistant",
                    tuple(blocks),  # type: ignore[arg-type]
                    Usage(rng.randint(100, 90000), rng.randint(0, 5000), 0, rng.randint(10, 900)),
                    "tool_use" if len(blocks) == 3 else "stop",
                    "anthropic",
                    "claude-sonnet-4-5",
                )
            ]
        else:
            batch = [
                Message("tool", (ToolResultBlock(f"toolu_{i - 1:08d}", _text(rng, 40)),)),
            ]
        out.append(batch)
        total += len(batch)
    return out


def write_session(root: Path, n_entries: int) -> Path:
    with FSJSONLStore(root, "/bench/project", durability="none") as store:
        pending: list[Message] = []
        for batch in make_rounds(n_entries):
            pending.extend(batch)
            if len(pending) >= 500:
                store.append_messages(pending)
                pending = []
        if pending:
            store.append_messages(pending)
    return store.path


def bare_loop(path: Path) -> int:
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            json.loads(line)
            n += 1
    return n


def timed_pair(a, b, runs: int) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """Median seconds of ``a()`` and ``b()`` and the median of the per-run
    ratios a/b, runs interleaved so a busy machine hurts both alike.  The
    results are freed outside the timing (a loaded session lives on)."""
    ta, tb, ratios = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        result = b()
        tb.append(time.perf_counter() - t)
        del result
        t = time.perf_counter()
        result = a()
        ta.append(time.perf_counter() - t)
        del result
        ratios.append(ta[-1] / tb[-1])
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def write_tree(root: Path, n_entries: int) -> tuple[Path, int]:
    """A session that branches: before every other batch of ~300 entries the
    leaf moves back to where the previous batch started (``set_leaf``), so
    the new batch is its sibling.  About half of the file is on the current
    path.  Returns the file and the current path's length in messages."""
    with FSJSONLStore(root, "/bench/tree", durability="none") as store:
        pending: list[Message] = []
        before_prev: str | None = None  # the leaf before the previous batch
        k = 0
        for batch in make_rounds(n_entries):
            pending.extend(batch)
            if len(pending) >= 300:
                k += 1
                if k % 2 == 0 and before_prev is not None:
                    store.set_leaf(before_prev)
                before_prev = store.leaf_id
                store.append_messages(pending)
                pending = []
        if pending:
            store.append_messages(pending)
        path_len = len(store.load_conversation().conversation)
    return store.path, path_len


def retained(load) -> int:  # type: ignore[no-untyped-def]
    """Bytes a load's result keeps (tracemalloc, one run)."""
    import tracemalloc

    tracemalloc.start()
    result = load()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del result
    return size


def append_times(store, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    msg = Message(
        "assistant", (Text("a typical short answer " * 4),), Usage(100, 0, 0, 20), "stop", "p", "m"
    )
    store.append_messages([Message.user("first")])  # creates the file / the row
    times = []
    for _ in range(n):
        t = time.perf_counter()
        store.append_messages([msg])
        times.append(time.perf_counter() - t)
    return times


def p99(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * 0.99))]


def bench_append(root: Path, durability: str, n: int) -> float:
    with FSJSONLStore(root, f"/bench/{durability}", durability=durability) as store:  # type: ignore[arg-type]
        return statistics.median(append_times(store, n))


def bench_backends(root: Path, path: Path, runs: int, appends: int, pg_url: str | None) -> None:
    """Load and append per backend, as ratios to JSONL."""
    export = list(open_backend(str(path.parent.parent)).export(str(path)))
    header, entries = export[0], export[1:]
    sid = header["id"]
    urls = {"sqlite": f"sqlite:///{root / 'bench.db'}"}
    if pg_url:
        urls["postgres"] = pg_url
    else:
        print("postgres: skipped (no --postgres URL and no PANTO_TEST_POSTGRES_URL)")
    jsonl_load = None
    jsonl_times = append_times(FSJSONLStore(root, "/bench/app", durability="fsync"), appends)
    for kind, url in urls.items():
        b = open_backend(url)
        try:
            b.import_session(header, entries)
        except Exception:  # a database that holds it from an earlier run
            pass
        ours, base, ratio = timed_pair(lambda: b.read(sid), lambda: read_session(path), runs)  # noqa: B023
        jsonl_load = base
        with b.create("/bench/app") as store:
            times = append_times(store, appends)
        print(
            f"{kind}: load {ours * 1e3:.0f} ms, ratio {ratio:.2f} to JSONL "
            f"({jsonl_load * 1e3:.0f} ms); append (fsync) median {statistics.median(times) * 1e6:.0f} us "
            f"ratio {statistics.median(times) / statistics.median(jsonl_times):.2f}, "
            f"p99 {p99(times) * 1e6:.0f} us ratio {p99(times) / p99(jsonl_times):.2f}"
        )
    print(
        f"jsonl: append (fsync) median {statistics.median(jsonl_times) * 1e6:.0f} us, "
        f"p99 {p99(jsonl_times) * 1e6:.0f} us"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--appends", type=int, default=200)
    ap.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    ap.add_argument("--postgres", default=os.environ.get("PANTO_TEST_POSTGRES_URL"))
    ap.add_argument("--skip-backends", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        path = write_session(root, args.entries)
        size = path.stat().st_size
        lines = bare_loop(path)  # also warms the page cache and the allocator
        loaded = read_session(path)
        assert len(loaded.conversation) + (loaded.dangling_user is not None) == args.entries
        del loaded  # time loads into a small heap, as at panto's start
        ours, base, ratio = timed_pair(
            lambda: read_session(path), lambda: bare_loop(path), args.runs
        )
        print(
            f"load {lines - 1:,} entries ({size / 1e6:.1f} MB): read_session {ours * 1e3:.0f} ms, "
            f"bare json.loads loop {base * 1e3:.0f} ms: ratio {ratio:.2f} (target <= 2)"
        )
        listing, base2, ratio2 = timed_pair(
            lambda: list_sessions(root), lambda: bare_loop(path), args.runs
        )
        print(
            f"list_sessions (panto sessions) over it: {listing * 1e3:.0f} ms, "
            f"ratio {ratio2:.2f} to the bare loop"
        )
        for durability in ("fsync", "flush", "none"):
            med = bench_append(root, durability, args.appends)
            print(f"append one message, durability={durability}: median {med * 1e6:.0f} us")
        tree_root = root / "tree"
        tpath, path_len = write_tree(tree_root, args.entries)
        tlines = bare_loop(tpath)
        ours, base, ratio = timed_pair(
            lambda: read_session(tpath), lambda: bare_loop(tpath), args.runs
        )
        print(
            f"tree: {tlines - 1:,} entries, current path {path_len:,} messages: read_session "
            f"{ours * 1e3:.0f} ms, bare loop {base * 1e3:.0f} ms: ratio {ratio:.2f} (target <= 2)"
        )
        kept_tree = retained(lambda: read_session(tpath))
        kept_linear = retained(lambda: read_session(path))
        print(
            f"tree: the loaded path keeps {kept_tree / 1e6:.1f} MB "
            f"({kept_tree / max(path_len, 1):.0f} B/message); the linear session "
            f"{kept_linear / 1e6:.1f} MB ({kept_linear / args.entries:.0f} B/message)"
        )
        if not args.skip_backends:
            bench_backends(root, path, args.runs, args.appends, args.postgres)
        fs = os.statvfs(root)
        print(f"(file system of {root}: block size {fs.f_bsize})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
