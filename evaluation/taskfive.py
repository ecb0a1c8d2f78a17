"""CLEF 2024 CheckThat! Task 5 data, runs and scores, in plain Python.

Format: one JSON object per line with `id`, `rumor`, `timeline` (a list of
`[account_url, tweet_id, text]`) and, in labelled data, `label` (SUPPORTS, REFUTES or
NOT ENOUGH INFO) and `evidence` (timeline entries). Qrels are TREC lines
`rumor_id 0 tweet_id relevance`; runs are TREC lines `rumor_id Q0 tweet_id rank score tag`.

Scoring follows the task's definitions:

* MAP: average precision of each rumor's ranked list, with the number of relevant tweets in
  the denominator (trec_eval's `map`), so a rumor with 25 gold tweets can reach at most 5/25
  from a five-item list;
* R@5: relevant tweets among the first five over all relevant tweets;
* both are averaged over the rumors present in the qrels. The qrels list only rumors that have
  evidence (the English dev qrels hold 19 of the 32 rumors: every SUPPORTS and REFUTES one), so
  NOT ENOUGH INFO rumors are outside the retrieval average whatever a run retrieves for them;
  the task's web page says systems "get no credit" for retrieving tweets for them. A rumor in
  the qrels that the run lacks counts as 0 (trec_eval `-c`), never skipped;
* Macro-F1 over the three labels, and Strict Macro-F1, where a correct label for a rumor with
  gold evidence only counts when at least one retrieved tweet is gold evidence (a correct label
  without it is scored as a wrong answer; NOT ENOUGH INFO rumors have no evidence to find).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from pipeline import safejson

LABELS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
# Twitter's snowflake epoch (2010-11-04T01:42:54.657Z); ids carry their creation time.
_SNOWFLAKE_EPOCH_MS = 1288834974657
_WRONG = "__wrong__"  # a label no rumor has: a correct label that strict scoring rejects


class TaskFiveFormatError(ValueError):
    """A data, qrels or run file does not have the Task 5 shape; the message names the line."""


@dataclass(frozen=True)
class TimelineEntry:
    account_url: str
    post_id: str
    text: str

    @property
    def handle(self) -> str:
        return account_handle(self.account_url)


@dataclass(frozen=True)
class Rumor:
    id: str
    text: str
    timeline: list[TimelineEntry]
    label: str | None = None
    evidence: list[TimelineEntry] = field(default_factory=list)


@dataclass(frozen=True)
class RetrievalScores:
    map: float
    recall_at_5: float
    rumors: int  # rumors averaged over (those in the qrels)
    per_rumor: dict[str, tuple[float, float]]  # rumor id -> (AP, R@5)


@dataclass(frozen=True)
class VerdictScores:
    macro_f1: float
    strict_macro_f1: float
    rumors: int


def account_handle(account_url: str) -> str:
    """`https://twitter.com/LBpresidency ` -> `lbpresidency` (the data has stray spaces)."""
    path = urlsplit(account_url.strip()).path.strip("/")
    return (path.split("/", 1)[0] if path else account_url.strip()).lower()


def snowflake_time(post_id: str) -> datetime | None:
    """Creation time encoded in a tweet id; None for ids from before snowflakes (2010) and
    for what is not a 64-bit decimal id ("²" is a digit to `str.isdigit`, not to `int`)."""
    if not post_id.isascii() or not post_id.isdigit() or len(post_id) > 20:
        return None
    value = int(post_id)
    if value < (1 << 22) or value >= (1 << 64):
        return None
    millis = (value >> 22) + _SNOWFLAKE_EPOCH_MS
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


def _entry(raw: object, where: str) -> TimelineEntry:
    if (
        not isinstance(raw, list | tuple)
        or len(raw) != 3
        or not all(isinstance(x, str | int) for x in raw)
    ):
        raise TaskFiveFormatError(f"{where}: a timeline entry must be [account_url, id, text]")
    account_url, post_id, text = (str(x) for x in raw)
    return TimelineEntry(account_url.strip(), post_id.strip(), text)


def parse_rumor(line: str, where: str) -> Rumor:
    try:
        obj = safejson.loads(line)
    except safejson.UntrustedJSONError as exc:
        raise TaskFiveFormatError(f"{where}: not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise TaskFiveFormatError(f"{where}: expected a JSON object")
    for key in ("id", "rumor", "timeline"):
        if key not in obj:
            raise TaskFiveFormatError(f"{where}: missing {key!r}")
    if not isinstance(obj["timeline"], list):
        raise TaskFiveFormatError(f"{where}: 'timeline' must be a list")
    label = obj.get("label")
    if label is not None and label not in LABELS:
        raise TaskFiveFormatError(f"{where}: unknown label {label!r}")
    evidence = obj.get("evidence") or []
    if not isinstance(evidence, list):
        raise TaskFiveFormatError(f"{where}: 'evidence' must be a list")
    return Rumor(
        id=str(obj["id"]),
        text=str(obj["rumor"]),
        timeline=[_entry(e, where) for e in obj["timeline"]],
        label=label,
        evidence=[_entry(e, where) for e in evidence],
    )


def _lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text file; bytes that are not UTF-8 are a format error
    naming the line, not a `UnicodeDecodeError` from deep inside the reader."""
    number = 0
    with open(path, encoding="utf-8") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                yield number, line
        except UnicodeDecodeError as exc:  # decoded a block at a time: the line is approximate
            raise TaskFiveFormatError(
                f"{path}: not UTF-8 text (after line {number}): {exc.reason}"
            ) from exc


def read_rumors(path: str | Path) -> list[Rumor]:
    rumors: list[Rumor] = []
    for number, line in _lines(path):
        if line.strip():
            rumors.append(parse_rumor(line, f"{path}:{number}"))
    return rumors


def _fields(path: str | Path, kind: str, layout: str) -> Iterator[tuple[str, list[str]]]:
    """The blank-separated fields of each non-blank TREC line, with where the line is; a line
    with another number of fields than `layout` names is a format error."""
    for number, line in _lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != len(layout.split()):
            raise TaskFiveFormatError(f"{path}:{number}: {kind} lines are '{layout}'")
        yield f"{path}:{number}", parts


def _int(value: str, where: str, name: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise TaskFiveFormatError(f"{where}: {name} must be an int") from exc


def read_qrels(path: str | Path) -> dict[str, set[str]]:
    """Rumor id -> relevant tweet ids (relevance > 0). A rumor whose lines are all 0 keeps an
    empty set: it is in the qrels and counts in the averages."""
    qrels: dict[str, set[str]] = {}
    for where, (rumor, _iteration, doc, relevance) in _fields(
        path, "qrels", "rumor_id 0 tweet_id relevance"
    ):
        docs = qrels.setdefault(rumor, set())
        if _int(relevance, where, "relevance") > 0:
            docs.add(doc)
    return qrels


def write_run(
    out: TextIO, run: Mapping[str, Sequence[tuple[str, float]]], tag: str = "factnote"
) -> None:
    """TREC run lines `rumor_id Q0 tweet_id rank score tag`, ranks from 1 in list order."""
    if not tag or any(c.isspace() for c in tag):
        raise ValueError("the run tag must be one word")
    for rumor_id, ranked in run.items():
        for rank, (doc, score) in enumerate(ranked, start=1):
            out.write(f"{rumor_id} Q0 {doc} {rank} {score:.6f} {tag}\n")


def read_run(path: str | Path) -> dict[str, list[str]]:
    """Rumor id -> tweet ids ordered by rank."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for where, parts in _fields(path, "run", "rumor_id Q0 tweet_id rank score tag"):
        rows.setdefault(parts[0], []).append((_int(parts[3], where, "rank"), parts[2]))
    return {rumor: [doc for _r, doc in sorted(items)] for rumor, items in rows.items()}


def average_precision(ranked: Sequence[str], relevant: set[str]) -> float:
    """Sum of precision at each relevant hit, over the number of relevant items."""
    if not relevant:
        return 0.0
    hits = 0
    total = 0.0
    seen: set[str] = set()
    for position, doc in enumerate(ranked, start=1):
        if doc in relevant and doc not in seen:
            hits += 1
            total += hits / position
        seen.add(doc)
    return total / len(relevant)


def recall_at(ranked: Sequence[str], relevant: set[str], k: int = 5) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def retrieval_scores(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]], k: int = 5
) -> RetrievalScores:
    """MAP and R@k averaged over the rumors in `qrels` (see the module docstring)."""
    per: dict[str, tuple[float, float]] = {}
    for rumor, relevant in qrels.items():
        ranked = list(run.get(rumor, []))
        per[rumor] = (average_precision(ranked, relevant), recall_at(ranked, relevant, k))
    n = len(per)
    return RetrievalScores(
        map=sum(a for a, _r in per.values()) / n if n else 0.0,
        recall_at_5=sum(r for _a, r in per.values()) / n if n else 0.0,
        rumors=n,
        per_rumor=per,
    )


def macro_f1(
    gold: Sequence[str], predicted: Sequence[str], labels: Iterable[str] = LABELS
) -> float:
    """Unweighted mean of per-label F1 (a label never predicted nor present scores 0)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted labels differ in length")
    scores: list[float] = []
    for label in labels:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p == label)
        fp = sum(1 for g, p in zip(gold, predicted, strict=True) if g != label and p == label)
        fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p != label)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def verdict_scores(
    rumors: Sequence[Rumor],
    predicted: Mapping[str, str],
    retrieved: Mapping[str, Sequence[str]],
) -> VerdictScores:
    """Macro-F1 and Strict Macro-F1 over the labelled rumors; a rumor without a prediction
    counts as NOT ENOUGH INFO."""
    gold: list[str] = []
    plain: list[str] = []
    strict: list[str] = []
    for rumor in rumors:
        if rumor.label is None:
            continue
        label = predicted.get(rumor.id, "NOT ENOUGH INFO")
        gold.append(rumor.label)
        plain.append(label)
        evidence = {e.post_id for e in rumor.evidence}
        found = bool(evidence & set(retrieved.get(rumor.id, [])))
        strict.append(label if (label != rumor.label or not evidence or found) else _WRONG)
    return VerdictScores(
        macro_f1=macro_f1(gold, plain),
        strict_macro_f1=macro_f1(gold, strict),
        rumors=len(gold),
    )
