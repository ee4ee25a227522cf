"""Usage and cost: tokens per model and thread, model calls, tool time, and an estimated price.

What it counts is what the source recorded: the `usage` an adapter put on an event (Anthropic
`input_tokens` / `cache_read_input_tokens` / `cache_creation_input_tokens`, OpenAI `prompt_tokens` /
`completion_tokens` / `prompt_tokens_details.cached_tokens`, Gemini's `*TokenCount`, Cline's
`tokens: {prompt, completion, cached}` …), normalised to four disjoint counts: `input` (not from a
cache), `output`, `cache_read`, `cache_write`.

One API response is one model call, however many lines repeat its usage: Claude Code writes one
line per content block of a message and repeats `message.usage` on each (with the output count
growing as the message streamed), so lines of one `message_id` in one thread are one call holding
the largest count seen. Turn totals (an Agent SDK `ResultMessage`, `kind == "result"`) are kept
apart and used only for a thread that recorded no per-call usage, so nothing is counted twice. So
are a session's own totals where a program keeps only those (Goose's `accumulated_*` token counts:
a usage record marked `SESSION_TOTALS`), told apart as tier -2 so the report can say whose totals
they are.

Prices come from `genai-prices` (a maintained price table, updated by upgrading the package), never
from numbers typed here; a model it does not know has no price, never a guess. The index pass only
adds numbers into buckets keyed by (thread, model, hour, price tier): the hour picks the price that
was in force (prices change on dates), the tier keeps long-context calls (priced higher above a
threshold of input tokens) apart from short ones, so the cost computed from a bucket's totals is the
sum of its calls' costs. Costs are computed from the buckets when a summary is made and again when
it is read with another version of the price table.

Per call, the tally keeps a few numbers (where it sits, its model, its four counts) for the charts:
model calls on a time axis and tokens per turn.
"""

from __future__ import annotations

import logging
import math
import statistics
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

log = logging.getLogger(__name__)

FIELDS = ("input", "output", "cache_read", "cache_write")
RECENT = 32  # message ids per thread remembered for de-duplication (lines of a message are close)
HOUR = 3600
MAX_COUNT = 1 << 50
_NONE = (0, 0, 0, 0)  # no tokens counted


# --- reading what a source recorded ------------------------------------------------------------


def _hour(ts: float | None) -> int | None:
    """The hour (since the epoch) a call was made in, which picks its price; None when unknown."""
    return None if ts is None or not -1e12 < ts < 1e12 else int(ts // HOUR)


def _n(value: Any) -> int:
    """A token count: a non-negative number, anything else is 0."""
    if value.__class__ is int:
        return value if 0 <= value <= MAX_COUNT else 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if value != value or value < 0 or value > MAX_COUNT:
        return 0  # not a count any API reports (a hostile or corrupt record)
    return int(value)


def tokens_of(u: Any) -> tuple[int, int, int, int] | None:
    """(input, output, cache_read, cache_write) from a source's usage record, or None when it
    holds no token counts. `input` never includes cached tokens, whatever the source's convention."""
    if not isinstance(u, dict):
        return None
    if "prompt_tokens" in u or "completion_tokens" in u:
        # OpenAI chat (and LiteLLM): prompt_tokens includes cached input (and, for LiteLLM's
        # Anthropic models, the cache writes it also reports on their own)
        details = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
        read = _n(details.get("cached_tokens")) or _n(u.get("cache_read_input_tokens")) or _n(
            u.get("prompt_cache_hit_tokens"))
        write = _n(u.get("cache_creation_input_tokens"))
        prompt = _n(u.get("prompt_tokens"))
        return max(0, prompt - read - write), _n(u.get("completion_tokens")), read, write
    if "input_tokens" in u or "output_tokens" in u:
        inp, out, read, write = (u.get("input_tokens"), u.get("output_tokens"),
                                 u.get("cache_read_input_tokens"), u.get("cache_creation_input_tokens"))
        if inp.__class__ is int and out.__class__ is int and read.__class__ is int and \
                write.__class__ is int and 0 <= inp <= MAX_COUNT and 0 <= out <= MAX_COUNT and \
                0 <= read <= MAX_COUNT and 0 < write <= MAX_COUNT and "input_tokens_details" not in u:
            # Anthropic's usage as it nearly always is (a line each); a write of 0 may be told by
            # `cache_creation` instead, below
            return inp, out, read, write
        if isinstance(u.get("input_tokens_details"), dict):  # OpenAI Responses: input includes cached
            read = _n(u["input_tokens_details"].get("cached_tokens"))
            return max(0, _n(u.get("input_tokens")) - read), _n(u.get("output_tokens")), read, 0
        write = _n(u.get("cache_creation_input_tokens"))
        if not write and isinstance(u.get("cache_creation"), dict):
            write = sum(_n(v) for v in u["cache_creation"].values())
        return (_n(u.get("input_tokens")), _n(u.get("output_tokens")),
                _n(u.get("cache_read_input_tokens")), write)
    if "promptTokenCount" in u or "candidatesTokenCount" in u:  # Gemini usageMetadata
        read = _n(u.get("cachedContentTokenCount"))
        return (max(0, _n(u.get("promptTokenCount")) - read),
                _n(u.get("candidatesTokenCount")) + _n(u.get("thoughtsTokenCount")), read, 0)
    if "prompt" in u or "completion" in u:  # Cline's metrics.tokens
        return _n(u.get("prompt")), _n(u.get("completion")), _n(u.get("cached")), _n(
            u.get("cacheWrites"))
    if "inputTokens" in u or "outputTokens" in u:  # camelCase (Claude Code's modelUsage, Bedrock)
        return (_n(u.get("inputTokens")), _n(u.get("outputTokens")),
                _n(u.get("cacheReadInputTokens")), _n(u.get("cacheCreationInputTokens")))
    return None


_COST_KEYS = ("cost", "total_cost_usd", "cost_usd", "costUSD")  # (`Tally.count` names them one by one)
# a usage record holding a whole session's (thread's) totals as the program kept them, not one
# call's: its value names the program ("Goose"); counted as turn totals are, in tier -2
SESSION_TOTALS = "session_totals"
TOTALS_TIER = -2
# a usage record holding what a session used before its program recorded calls one by one, beside
# the calls it did record (Goose's `carried_forward` ledger row): tokens and cost that count with the
# calls, but no call (not in calls per model, no bar), priced at the base rate as totals are: tier -3
CARRIED = "carried_forward"
CARRIED_TIER = -3
# a usage record of a call the adapter could tie to no event of the conversation (Goose's ledger
# rows name no message): counted as a call, and how many said in the usage panel
UNTIED = "untied"


def cost_of(u: Any) -> float | None:
    """What the source itself says the call or turn cost, in USD (not our estimate)."""
    if not isinstance(u, dict) or u.keys().isdisjoint(_COST_KEYS):
        return None
    for key in _COST_KEYS:
        v = u.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v >= 0:
            return float(v)
    return None


# --- prices --------------------------------------------------------------------------------------


class Prices:
    """The price table: `genai-prices`, loaded on first use (it takes a moment to import)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str, Any] = {}
        self._tiers: dict[str, tuple[int, ...]] = {}
        self._lib = None
        self.version = ""

    def _load(self):
        if self._lib is None:
            with self._lock:
                if self._lib is None:
                    try:
                        import genai_prices
                        from genai_prices import data_snapshot

                        self.version = genai_prices.__version__
                        self._lib = (genai_prices, data_snapshot)
                    except ImportError:  # pragma: no cover - a dependency of the package
                        log.warning("genai-prices is not installed: costs are not estimated")
                        self._lib = False
        return self._lib

    def model(self, name: str):
        """(provider, model info) from the price table, or None for a model it does not know."""
        if not name:
            return None
        if name in self._models:
            return self._models[name]
        lib = self._load()
        found = None
        if lib:
            ref = name.split("/")[-1] if "/" in name else name  # "anthropic/claude-…", "openai/gpt-…"
            for candidate in dict.fromkeys((name, ref)):
                try:
                    found = lib[1].get_snapshot().find_provider_model(candidate, None, None, None)
                    break
                except LookupError:
                    continue
        self._models[name] = found
        return found

    def tiers(self, name: str) -> tuple[int, ...]:
        """The input-token thresholds above which the model is priced differently."""
        if name in self._tiers:
            return self._tiers[name]
        found = self.model(name)
        starts: set[int] = set()
        if found:
            prices = found[1].prices
            for p in prices if isinstance(prices, list) else [prices]:
                mp = getattr(p, "prices", p)
                for value in vars(mp).values():
                    for tier in getattr(value, "tiers", None) or ():
                        starts.add(int(tier.start))
        self._tiers[name] = out = tuple(sorted(starts))
        return out

    def tier(self, name: str, total_input: int) -> int:
        tiers = self._tiers.get(name)
        if tiers is None:
            tiers = self.tiers(name)
        return bisect_left(tiers, total_input) if tiers else 0  # (how many thresholds it is above)

    def cost(self, name: str, hour: int | None, calls: int, inp: int, out: int, read: int,
             write: int, tier: int = 0) -> float | None:
        """USD for `calls` calls of one tier and hour totalling these counts, or None (no price).
        Tiers -1, -2 and -3: totals of calls whose sizes are unknown (a turn's, a session's, what a
        session used before its calls were recorded), priced at the base rate."""
        found = self.model(name)
        if not found or calls <= 0:
            return None if not found else 0.0
        genai_prices = self._lib[0]
        provider, info = found
        # the library prices one request; every call of a bucket sits in the same tier, so the
        # bucket costs `calls` times its average call (prices are linear within a tier)
        if tier < 0 and self.tiers(name):
            calls = max(calls, (inp + read + write) // self.tiers(name)[0] + 1)
        read_each, write_each = read / calls, write / calls
        inp_each = (inp + read + write) / calls
        # the input is at least its cached parts, but they may each round up when divided apart
        # (the library, which subtracts the decimals the floats print as, refuses such usage):
        # the input is rounded up too
        while Decimal(repr(inp_each)) < Decimal(repr(read_each)) + Decimal(repr(write_each)):
            inp_each = math.nextafter(inp_each, math.inf)
        usage = genai_prices.Usage(input_tokens=inp_each, output_tokens=out / calls,
                                   cache_read_tokens=read_each, cache_write_tokens=write_each)
        when = datetime.fromtimestamp(hour * HOUR + HOUR / 2, timezone.utc) if hour is not None \
            else datetime.now(timezone.utc)
        try:
            price = info.calc_price(usage, provider, genai_request_timestamp=when)
        except (LookupError, ValueError, TypeError, ArithmeticError) as e:
            log.warning("cannot price %s: %s", name, e)
            return None
        return float(price.total_price) * calls


PRICES = Prices()


# --- the tally the index pass feeds ------------------------------------------------------------


class _Calls:
    """One thread's model calls as columns: first and last event, model, hour, four counts."""

    _COLS = ("first", "last", "model", "hour", *FIELDS)

    def __init__(self) -> None:
        for name in self._COLS:
            setattr(self, name, array("q"))

    def __len__(self) -> int:
        return len(self.cache_write)

    def dump(self, blobs: list) -> None:
        blobs.extend(getattr(self, name).tobytes() for name in self._COLS)

    def load(self, blobs) -> "_Calls":
        for name in self._COLS:
            getattr(self, name).frombytes(next(blobs))
        if len({len(getattr(self, n)) for n in self._COLS}) != 1:
            raise ValueError("usage columns disagree")
        return self


class Tally:
    """Usage of one session, fed event by event in file order (the index pass and the live tail)."""

    def __init__(self) -> None:
        self.models: list[str] = []  # code → model name ("" when the source named none)
        self._code: dict[str, int] = {}
        self.calls: dict[str, _Calls] = {}  # thread → its model calls
        # (thread, model code, hour, tier) → [calls, input, output, cache_read, cache_write]
        self.buckets: dict[tuple, list] = {}
        self.turns: dict[tuple, list] = {}  # the same from turn totals (ResultMessage)
        self.source_cost = {"calls": {}, "turns": {}}  # thread → USD the source itself reported
        self.current: dict[str, str] = {}  # thread → the model last named in it
        self.untied: dict[str, int] = {}  # thread → its calls tied to no event (usage.UNTIED)
        self._recent: dict[str, OrderedDict] = {}  # thread → message id → (call index, cost)
        # thread → (message id, usage record, call index) of its last line that counted a call: a
        # line that repeats it word for word (Claude Code writes one line per content block of a
        # message, most with the same usage) changes nothing but the call's last event
        self._last: dict[str, tuple] = {}
        # bucket row (thread, model, hour, tier and its five counts) → its cost, as the last summary
        # priced it: a refresh prices again only the buckets its lines changed (the price table
        # takes ~0.2 ms a bucket, and a 1 GB session has ~500 of them: ~0.1 s per line written)
        self.costs: dict[tuple, float | None] = {}

    def _model(self, name: str) -> int:
        code = self._code.get(name)
        if code is None:
            code = self._code[name] = len(self.models)
            self.models.append(name)
        return code

    def observe(self, thread: str, seq: int, ev, ts: float | None) -> None:
        """Feed one event that names a model or carries usage (`count`, with the event's fields)."""
        self.count(thread, seq, ev.model, ev.usage, ev.message_id, ev.kind, ts)

    def count(self, thread: str, seq: int, model: str | None, u: Any, mid: str | None, kind: str,
              ts: float | None) -> None:
        """Feed what one event (`kind`, its model, usage record and message id) says: `observe`,
        and the index pass's inline filing of plain records, which has no event to give. It runs
        for every assistant line of an index pass: the common case, another line of a message seen
        already (Claude Code writes one per content block, its output count growing), updates the
        call's bucket in place."""
        if model:
            self.current[thread] = model
        if u is None:
            return
        last = self._last.get(thread)
        if last is not None and last[0] == mid and last[1] == u and kind != "result":
            self.calls[thread].last[last[2]] = seq
            return
        counts = tokens_of(u)
        # (most usage records name no cost: told without a call)
        paid = None if u.__class__ is dict and "cost" not in u and "total_cost_usd" not in u \
            and "cost_usd" not in u and "costUSD" not in u else cost_of(u)
        if counts is None:
            if paid is None:
                return
            counts = _NONE
        if counts == _NONE and not paid:
            return  # a synthetic or failed message: no API call was billed
        if kind == "result" or (u.__class__ is dict and SESSION_TOTALS in u):
            model = model or self.current.get(thread, "")
            hour = _hour(ts)
            # tier -1: a turn's total of several calls, priced at the base rate (-2: the session's)
            tier = -1 if kind == "result" else TOTALS_TIER
            if counts != _NONE:
                self._add(self.turns, (thread, self._model(model), hour, tier), counts)
            if paid:
                turns = self.source_cost["turns"]
                turns[thread] = turns.get(thread, 0.0) + paid
            return
        if u.__class__ is dict and CARRIED in u:
            # counted with the calls (so the session's totals are not counted again), as no call
            model = model or self.current.get(thread, "")
            self._add(self.buckets, (thread, self._model(model), _hour(ts), CARRIED_TIER), counts)
            if paid:
                src = self.source_cost["calls"]
                src[thread] = src.get(thread, 0.0) + paid
            return
        calls = self.calls.get(thread)
        if calls is None:
            calls = self.calls[thread] = _Calls()
        recent = self._recent.get(thread)
        if recent is None:
            recent = self._recent[thread] = OrderedDict()
        seen = recent.get(mid) if mid else None
        if seen is not None:
            # another line of a call seen already: it holds the largest count seen of each kind
            i, old_paid = seen
            calls.last[i] = seq
            i0, o0, r0, w0 = old = (calls.input[i], calls.output[i], calls.cache_read[i],
                                    calls.cache_write[i])
            i1, o1, r1, w1 = counts
            # what the call holds now: the largest count seen of each kind
            i1, o1, r1, w1 = counts = (i0 if i0 > i1 else i1, o0 if o0 > o1 else o1,
                                       r0 if r0 > r1 else r1, w0 if w0 > w1 else w1)
            if counts != old:
                code, h = calls.model[i], calls.hour[i]
                name, hour = self.models[code], None if h < 0 else h
                priced, now = i0 + r0 + w0, i1 + r1 + w1
                tier = PRICES.tier(name, priced)
                key = (thread, code, hour, tier)
                bucket = self.buckets.get(key)
                if bucket is not None and (now == priced or PRICES.tier(name, now) == tier):
                    # the same bucket (mostly the output grew): counts in place
                    bucket[1] += i1 - i0
                    bucket[2] += o1 - o0
                    bucket[3] += r1 - r0
                    bucket[4] += w1 - w0
                else:
                    self._add(self.buckets, key, old, -1)
                    self._add(self.buckets, (thread, code, hour, PRICES.tier(name, now)), counts)
                calls.input[i], calls.output[i], calls.cache_read[i], calls.cache_write[i] = counts
            if paid is not None and paid != old_paid:
                src = self.source_cost["calls"]
                src[thread] = src.get(thread, 0.0) + paid - (old_paid or 0.0)
                recent[mid] = (i, paid)
            if u.__class__ is dict:
                self._last[thread] = (mid, u, i)
            return
        # a new call (`_hour`, `_model` and `_add` inlined: a call of most assistant messages)
        model = model or self.current.get(thread, "")
        hour = None if ts is None or not -1e12 < ts < 1e12 else int(ts // HOUR)
        code = self._code.get(model)
        if code is None:
            code = self._model(model)
        i0, o0, r0, w0 = counts
        if u.__class__ is dict and UNTIED in u:
            self.untied[thread] = self.untied.get(thread, 0) + 1
        i = len(calls.first)
        calls.first.append(seq)
        calls.last.append(seq)
        calls.model.append(code)
        calls.hour.append(-1 if hour is None else hour)
        calls.input.append(i0)
        calls.output.append(o0)
        calls.cache_read.append(r0)
        calls.cache_write.append(w0)
        key = (thread, code, hour, PRICES.tier(model, i0 + r0 + w0))
        bucket = self.buckets.get(key)
        if bucket is None:
            self.buckets[key] = [1, i0, o0, r0, w0]
        else:  # (a bucket held holds a call at least: one more never empties it)
            bucket[0] += 1
            bucket[1] += i0
            bucket[2] += o0
            bucket[3] += r0
            bucket[4] += w0
        if paid:
            src = self.source_cost["calls"]
            src[thread] = src.get(thread, 0.0) + paid
        if mid:
            recent[mid] = (i, paid)
            if len(recent) > RECENT:
                recent.popitem(last=False)
            if u.__class__ is dict:
                self._last[thread] = (mid, u, i)

    def retotal(self, thread: str, old, new, ts: float | None) -> None:
        """A session's own totals (SESSION_TOTALS) on the first event of its thread, replaced by
        newer ones (a row-session's row, rewritten as the session goes on: index._changed_rows):
        the old ones taken out, the new ones counted, as `observe` counted the first."""
        for ev, sign in ((old, -1), (new, 1)):
            u = ev.usage
            counts, paid = tokens_of(u) or (0, 0, 0, 0), cost_of(u)
            if any(counts):
                self._add(self.turns, (thread, self._model(ev.model or ""), _hour(ts), TOTALS_TIER),
                          counts, sign)
            if paid:
                turns = self.source_cost["turns"]
                turns[thread] = turns.get(thread, 0.0) + sign * paid

    @staticmethod
    def _add(buckets: dict, key: tuple, counts, sign: int = 1) -> None:
        b = buckets.get(key)
        i, o, r, w = counts
        if b is None:
            if sign > 0:  # (a new call's bucket, the common case: made in one go)
                buckets[key] = [sign, i, o, r, w]
                return
            b = buckets[key] = [0, 0, 0, 0, 0]
        b[0] += sign
        b[1] += sign * i
        b[2] += sign * o
        b[3] += sign * r
        b[4] += sign * w
        if b[0] <= 0:
            del buckets[key]

    def rows(self) -> list[list]:
        """The buckets that count: per-call usage, or turn totals for a thread without any.
        Rows are [thread, model, hour, tier, calls, input, output, cache_read, cache_write]
        (`priced` adds each row's cost)."""
        with_calls = {k[0] for k in self.buckets}
        out = [[t, self.models[m], h, tier, *v] for (t, m, h, tier), v in self.buckets.items()]
        out += [[t, self.models[m], h, tier, *v] for (t, m, h, tier), v in self.turns.items()
                if t not in with_calls]
        return out

    def paid(self) -> float | None:
        """What the source itself reported as cost, by the same rule as the buckets."""
        calls, turns = self.source_cost["calls"], self.source_cost["turns"]
        threads = set(calls) | set(turns)
        if not threads:
            return None
        return sum(calls[t] if t in calls else turns.get(t, 0.0) for t in threads)

    def summary(self) -> dict:
        """The compact usage the session summary keeps (what the list sorts and filters by)."""
        return priced({"buckets": self.rows(), "source_cost": self.paid(),
                       "untied": sum(self.untied.values())}, self.costs)

    def remember_costs(self, u: dict) -> None:
        """Take the bucket costs of a summary made by this price table (a cached index's), so its
        next refresh does not price every bucket again."""
        if u and u.get("prices") == (PRICES.version if PRICES._load() else ""):
            self.costs = {tuple(row[:9]): row[9] for row in u.get("buckets", ()) if len(row) > 9}

    # --- persistence ---

    def dump(self, blobs: list) -> dict:
        names = list(self.calls)
        for name in names:
            self.calls[name].dump(blobs)
        return {
            "models": self.models, "threads": names,
            "buckets": [[*k, *v] for k, v in self.buckets.items()],
            "turns": [[*k, *v] for k, v in self.turns.items()],
            "source_cost": self.source_cost, "current": self.current, "untied": self.untied,
            "recent": {t: [[m, i, c] for m, (i, c) in r.items()] for t, r in self._recent.items()},
        }

    @classmethod
    def load(cls, d: dict, blobs) -> "Tally":
        t = cls()
        t.models = list(d["models"])
        t._code = {m: i for i, m in enumerate(t.models)}
        for name in d["threads"]:
            t.calls[name] = _Calls().load(blobs)
        t.buckets = {tuple(r[:4]): list(r[4:]) for r in d["buckets"]}
        t.turns = {tuple(r[:4]): list(r[4:]) for r in d["turns"]}
        t.source_cost = {k: dict(v) for k, v in d["source_cost"].items()}
        t.current = dict(d["current"])
        t.untied = dict(d.get("untied", {}))
        t._recent = {th: OrderedDict((m, (i, c)) for m, i, c in r) for th, r in d["recent"].items()}
        return t


# --- costs from buckets ------------------------------------------------------------------------


def priced(u: dict, known: dict | None = None) -> dict:
    """Fill a compact usage (`buckets`, `source_cost`) with per-model totals and estimated costs
    from the current price table. Used when a summary is made and when a cached one was priced
    with another version of the table. `known`: bucket row → cost of the summary made before by
    this table (a bucket no line changed since costs what it cost then); left holding this one's."""
    models: dict[str, list] = {}
    parts: dict[str, list | None] = {}  # model → the costs of its buckets (None: one unknown)
    turns = 0
    totals = False  # some thread's tokens are the session's own totals (tier -2)
    carried = False  # …or what it used before its calls were recorded (tier -3)
    rows = []
    now: dict[tuple, float | None] = {}
    for row in u.get("buckets", ()):
        thread, model, hour, tier, calls, inp, out, read, write = key = tuple(row[:9])
        m = models.setdefault(model, [0, 0, 0, 0, 0])
        for i, v in enumerate((inp, out, read, write, calls if tier >= 0 else 0)):
            m[i] += v
        if tier == TOTALS_TIER:
            totals = True
        elif tier == CARRIED_TIER:
            carried = True
        elif tier < 0:
            turns += calls
        if known is not None and key in known:
            c = known[key]
        else:
            c = PRICES.cost(model, hour, calls, inp, out, read, write, tier)
        now[key] = c
        rows.append([*key, c])  # each bucket keeps its cost: the archive's stats add them by day
        if model not in parts:
            parts[model] = None if c is None else [c]
        elif c is None:
            parts[model] = None
        elif parts[model] is not None:
            parts[model].append(c)
    # sums exactly rounded (fsum), so that they do not depend on the buckets' order: a session
    # read while it grew lists its sub-agents' buckets in the order they appeared
    cost = {m: None if p is None else math.fsum(p) for m, p in parts.items()}
    total = [c for c in cost.values() if c is not None]
    if known is not None:
        known.clear()
        known.update(now)
    return {
        "buckets": rows,
        "source_cost": u.get("source_cost"),
        "models": {m: [*v, cost[m]] for m, v in models.items()},
        "cost": math.fsum(total) if total else None,
        "unpriced": sorted(m or "unknown model" for m, c in cost.items() if c is None),
        "calls": sum(v[4] for v in models.values()),
        "turns": turns,  # turns counted from turn totals (their calls were not recorded one by one)
        "session_totals": totals,  # tokens are (also) a session's own totals: no calls counted
        "carried": carried,  # tokens (also) carried from before the calls were recorded: no call
        "untied": u.get("untied", 0),  # calls tied to no event of the conversation
        "tokens": sum(sum(v[:4]) for v in models.values()),
        "prices": PRICES.version if PRICES._load() else "",
    }


def current(u: dict) -> dict:
    """A cached compact usage, re-priced if the price table changed since it was made."""
    if not u or u.get("prices") == (PRICES.version if PRICES._load() else ""):
        return u
    return priced(u)


# --- the report: what the session page and its .json show ------------------------------------


def tool_stats(calls) -> dict[str, dict]:
    """Per tool: count, errors, total / p50 / max duration (seconds) from the tool-call map."""
    durations: dict[str, list[float]] = {}
    out: dict[str, dict] = {}
    for c in calls:
        name = c.name or "?"
        s = out.get(name)
        if s is None:
            s = out[name] = {"count": 0, "errors": 0, "total_s": 0.0}
            durations[name] = []
        s["count"] += 1
        if c.status == "error":
            s["errors"] += 1
        d = c.duration
        if d is not None:
            s["total_s"] += d
            durations[name].append(d)
    for name, s in out.items():
        ds = durations[name]
        s["total_s"] = round(s["total_s"], 3)
        s["p50_s"] = round(statistics.median(ds), 3) if ds else None
        s["max_s"] = round(max(ds), 3) if ds else None
    return dict(sorted(out.items(), key=lambda kv: (-kv[1]["count"], kv[0])))


def compact_tools(calls) -> dict[str, list]:
    """Per tool [count, errors, total seconds]: what the summary keeps for the archive's stats."""
    out: dict[str, list] = {}
    for c in calls:
        s = out.get(c.name or "?")
        if s is None:
            s = out[c.name or "?"] = [0, 0, 0.0]
        s[0] += 1
        if c.status == "error":
            s[1] += 1
        d = c.duration
        if d is not None:
            s[2] += d
    return {k: [n, e, round(t, 3)] for k, (n, e, t) in out.items()}


def _models_json(models: dict) -> dict:
    return {m or "unknown model": {"input": v[0], "output": v[1], "cache_read": v[2],
                                   "cache_write": v[3], "calls": v[4],
                                   "cost_usd": None if v[5] is None else round(v[5], 6)}
            for m, v in sorted(models.items(), key=lambda kv: -(kv[1][5] or 0))}


def report(idx) -> dict:
    """Usage of a session for its page and its `.json`: the totals, and each thread on its own."""
    u = current(idx.summary.usage)
    calls = list(idx.calls.calls.values())
    tools = tool_stats(calls)
    by_thread: dict[str, list] = {}
    for row in u.get("buckets", ()):
        by_thread.setdefault(row[0], []).append(row)
    thread_calls: dict[str, list] = {}
    for c in calls:
        thread_calls.setdefault(c.call[0] if c.call else "main", []).append(c)
    threads = {}
    for name, th in idx.threads.items():
        sub = priced({"buckets": by_thread.get(name, [])})
        tc = tool_stats(thread_calls.get(name, []))
        threads[name] = {
            "label": th.label or name,
            "models": _models_json(sub["models"]),
            "calls": sub["calls"],
            "tokens": sub["tokens"],
            "cost_usd": None if sub["cost"] is None else round(sub["cost"], 6),
            "tool_calls": sum(t["count"] for t in tc.values()),
            "tool_time_s": round(sum(t["total_s"] for t in tc.values()), 3),
        }
    s = idx.summary
    return {
        "models": _models_json(u.get("models", {})),
        "cost_usd": None if u.get("cost") is None else round(u["cost"], 6),
        "unpriced": u.get("unpriced", []),
        "source_cost_usd": None if u.get("source_cost") is None else round(u["source_cost"], 6),
        "calls": u.get("calls", 0),
        "turns_without_calls": u.get("turns", 0),
        # the tokens of some thread are the session's totals as its program recorded them
        "session_totals": u.get("session_totals", False),
        # tokens used before the program recorded calls one by one (not a call), and calls its
        # records tie to no message
        "carried": u.get("carried", False),
        "untied_calls": u.get("untied", 0),
        "wall_s": None if s.duration is None else round(s.duration, 3),
        "tool_time_s": round(sum(t["total_s"] for t in tools.values()), 3),
        "tools": tools,
        "threads": threads,
        "prices": {"library": "genai-prices", "version": u.get("prices") or None},
    }


# --- charts ----------------------------------------------------------------------------------------


def _ts(th, seq: int) -> float | None:
    if 0 <= seq < len(th.ts):
        v = th.ts[seq]
        return None if v != v else v
    return None


def timeline(idx) -> dict:
    """Model calls and tool calls as bars on a time axis, one row per thread (parallel sub-agents
    get their own rows). A model call runs from the event before its first line (the request went
    out then) to its last line; a tool call from its call to its result."""
    tally: Tally = idx.usage
    rows = []
    t0 = idx.summary.started
    for name, th in idx.threads.items():
        bars = []
        calls = tally.calls.get(name)
        for i in range(len(calls) if calls else 0):
            first, last = calls.first[i], calls.last[i]
            end = _ts(th, last)
            start = _ts(th, first - 1) if first > 0 else None
            if end is None:
                continue
            start = end if start is None or start > end else start
            bars.append({"kind": "model", "start": start, "end": end, "event": th.ids[first],
                         "label": tally.models[calls.model[i]] or "model call",
                         "tokens": sum(getattr(calls, f)[i] for f in FIELDS), "error": False})
        rows.append({"thread": name, "label": th.label or name, "bars": bars})
    by_name = {r["thread"]: r for r in rows}
    for c in idx.calls.calls.values():
        if c.call is None or c.called_at is None:
            continue
        thread, seq = c.call
        row = by_name.get(thread)
        if row is None:
            continue
        end = c.finished_at if c.finished_at is not None else c.called_at
        row["bars"].append({"kind": "tool", "start": c.called_at, "end": max(end, c.called_at),
                            "event": idx.threads[thread].ids[seq], "label": c.name or "tool",
                            "error": c.status == "error", "status": c.status})
    for r in rows:
        r["bars"].sort(key=lambda b: b["start"])
    rows = [r for r in rows if r["bars"]]
    if t0 is None:
        t0 = min((b["start"] for r in rows for b in r["bars"]), default=None)
    return {"start": t0, "rows": rows}


def turns(idx) -> list[dict]:
    """Tokens per turn: a turn starts at a user prompt of the main thread and holds the model
    calls up to the next one, those of sub-agents it spawned included."""
    tally: Tally = idx.usage
    main = idx.threads.get("main")
    if main is None:
        return []
    starts = [seq for seq in range(len(main)) if main.roles[seq] == "user"
              and main.kinds[seq] == "message" and not main.hidden[seq]]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    out = [{"event": main.ids[s] if s < len(main) else None, "seq": s, "calls": 0,
            **{f: 0 for f in FIELDS}} for s in starts]
    if not len(main):
        return []

    def turn_of(seq: int) -> int:
        import bisect

        return max(0, bisect.bisect_right(starts, seq) - 1)

    for name, calls in tally.calls.items():
        th = idx.threads.get(name)
        if th is None:
            continue
        anchor = None
        if name != "main":
            parent = th.meta.get("parent_call")
            call = idx.calls.call(parent) if parent else None
            if call is None or call.call is None or call.call[0] != "main":
                continue
            anchor = turn_of(call.call[1])
        for i in range(len(calls)):
            t = out[anchor if anchor is not None else turn_of(calls.first[i])]
            t["calls"] += 1
            for f in FIELDS:
                t[f] += getattr(calls, f)[i]
    return [t for t in out if t["calls"]]


# --- words for people ----------------------------------------------------------------------------


def usd(value: float | None) -> str:
    """$12.34, $0.042, <$0.001; "" when there is no price."""
    if value is None:
        return ""
    if value == 0:
        return "$0"
    if value < 0.001:
        return "<$0.001"
    if value < 1:
        return f"${value:.3f}"
    if value < 1000:
        return f"${value:.2f}"
    return f"${value:,.0f}"


def count(n: int | float | None) -> str:
    """1,234 · 12.3k · 4.5M: token counts as people read them."""
    if n is None:
        return ""
    n = float(n)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= limit:
            v = n / limit
            return f"{v:.1f}{suffix}" if v < 100 else f"{v:.0f}{suffix}"
    return f"{n:.0f}"


# --- the archive: many sessions' summaries added up --------------------------------------------


def _local_day(ts: float) -> str:
    return datetime.fromtimestamp(ts).date().isoformat()


def archive(sessions, top: int = 15, min_calls_for_rate: int = 5) -> dict:
    """Sessions, tokens and cost per day (in the server's time zone; tokens and cost on the day
    the calls were made), per model, and the top tools by count, time and error rate, from
    `(ref, summary)` pairs. Only summaries are read: this is as fast as listing."""
    from datetime import date, timedelta

    from .tools import prefixed  # (tools imports the formats, which name this module's marks)

    days: dict[str, dict] = {}
    tools: dict[str, list] = {}
    models: dict[str, list] = {}
    totals = {"sessions": 0, "tokens": 0, "cost": 0.0, "calls": 0, "tool_calls": 0, "errors": 0,
              "unpriced_tokens": 0}

    def day(key: str) -> dict:
        d = days.get(key)
        if d is None:
            d = days[key] = {"day": key, "sessions": 0, "tokens": 0, "cost": 0.0, "calls": 0,
                             "errors": 0}
        return d

    for ref, s in sessions:
        started = s.started if s.started is not None else ref.mtime
        d = day(_local_day(started))
        d["sessions"] += 1
        d["errors"] += s.errors
        totals["sessions"] += 1
        totals["errors"] += s.errors
        totals["tool_calls"] += s.tool_calls
        u = current(s.usage)
        for row in u.get("buckets", ()):
            _, model, hour, tier, calls, inp, out, read, write = row[:9]
            cost = row[9] if len(row) > 9 else None
            tokens = inp + out + read + write
            b = day(_local_day(hour * HOUR)) if hour is not None else d
            b["tokens"] += tokens
            totals["tokens"] += tokens
            if tier >= 0:
                b["calls"] += calls
                totals["calls"] += calls
            m = models.setdefault(model or "unknown model", [0, 0, 0, 0, 0, 0.0, True, False])
            if tier == TOTALS_TIER:
                m[7] = True  # (some of its tokens are a session's own totals: no calls counted)
            for i, v in enumerate((inp, out, read, write, calls if tier >= 0 else 0)):
                m[i] += v
            if cost is None:
                m[6] = False
                totals["unpriced_tokens"] += tokens
            else:
                m[5] += cost
                b["cost"] += cost
                totals["cost"] += cost
        # (a format whose tool names name their server is kept apart: its `a__b` reads otherwise)
        fmt = s.format if prefixed(s.format) else ""
        for name, (n, e, t) in (s.tools or {}).items():
            x = tools.setdefault((name, fmt), [0, 0, 0.0, 0])
            x[0] += n
            x[1] += e
            x[2] += t
            x[3] += 1
    if days:  # every day of the range, so gaps read as gaps
        first, last = min(days), max(days)
        d0, d1 = date.fromisoformat(first), date.fromisoformat(last)
        if (d1 - d0).days <= 731:
            for i in range((d1 - d0).days + 1):
                day((d0 + timedelta(days=i)).isoformat())
    tool_rows = [{"name": k, "fmt": f, "count": v[0], "errors": v[1], "total_s": round(v[2], 3),
                  "sessions": v[3], "error_rate": v[1] / v[0] if v[0] else 0.0}
                 for (k, f), v in tools.items()]
    return {
        "totals": totals,
        "days": [days[k] for k in sorted(days)],
        "models": [{"model": k, "input": v[0], "output": v[1], "cache_read": v[2], "cache_write": v[3],
                    "calls": v[4], "cost": v[5] if v[6] else None, "session_totals": v[7]}
                   for k, v in sorted(models.items(), key=lambda kv: -(kv[1][5] or 0))],
        "tools": {
            "by_count": sorted(tool_rows, key=lambda t: (-t["count"], t["name"]))[:top],
            "by_time": sorted(tool_rows, key=lambda t: (-t["total_s"], t["name"]))[:top],
            "by_error_rate": sorted([t for t in tool_rows if t["count"] >= min_calls_for_rate
                                     and t["errors"]],
                                    key=lambda t: (-t["error_rate"], -t["count"], t["name"]))[:top],
        },
        "min_calls_for_rate": min_calls_for_rate,
    }
