"""Experience memory: phase-specific strategies learned from finished episodes (EvoNote, seed
002, §4.3-4.4 and App. B.2-B.3), and how they are found again.

An item is `{phase, trigger, strategy}` (the paper's m = (Trigger, ActionStrategy, Phase)) with
its provenance and use record. One LLM call distills at most a few items from an episode's
feedback: the judge's (unsatisfactory → avoid, satisfactory → improve, excellent → reuse) or a
moderator's (rejection → avoid, edit → improve, approval → reuse). URLs and handles are cut
from what it returns: they are instance details (App. B.2), and a post's author must not be
able to plant a link that later prompts carry. An item that repeats a stranger's words from
its episode is refused; one distilled from the bot's own episode (a judged check, an approved
reply, an import) is only proposed, and no check sees it until a person approves it (unless an
admin turned on `use_proposed`); what a moderator's edit or rejection taught is used at once
(`pipeline.learning.memory_checks`, issue 33).

`MemoryIndex` holds the items in memory and retrieves the top k of one phase whose trigger
matches a query, by word overlap (share of the trigger's content words found in the query, an
inverted index) or by cosine of the embedded MiniLM model. It also merges near duplicates on
insert, keeps at most `max_items`, and decays: an item's weight halves every `half_life_days`
without a useful use, is multiplied by `penalty` when an episode that used it is judged
unsatisfactory, and the item is deleted when the weight falls under `min_weight`.

`Recall` is what a check uses: it asks the bank for each phase's items, renders them as
`<memory>` data blocks (`prompts.memory_block`, declared data, never instructions) and records
in the trace which items were shown. Persistence lives outside the pipeline (bot.memory.store).
"""

from __future__ import annotations

import difflib
import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from pipeline.config import MemoryConfig
from pipeline.learning.memory_checks import clean, copied_from, provenance
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.llm.output import DistillAnswer
from pipeline.llm.prompts import DISTILL_SYSTEM, distill_user, memory_block
from pipeline.records import MemoryUse, utcnow
from pipeline.relevance.lexical import terms
from pipeline.relevance.scoring import Embedder

if TYPE_CHECKING:
    from pipeline.learning.judge import Judgment
    from pipeline.records import Decision

Mode = Literal["unsatisfactory", "satisfactory", "excellent"]
Signal = Literal["judge", "approve", "edit", "reject"]
Kind = Literal["avoid", "improve", "reuse"]
# proposed: distilled from the bot's own episode, waiting for a person; approved: a person
# confirmed it (or it came from a moderator's edit or rejection); rejected: a person refused
# it; refused: the copy check refused it (`memory_checks.copied_from`), never approvable.
Status = Literal["proposed", "approved", "rejected", "refused"]
Origin = Literal["judge", "approve", "edit", "reject", "import"]
STATUSES: tuple[Status, ...] = ("proposed", "approved", "rejected", "refused")
# A moderator's own edit or rejection is a person's judgment: what is learned from it is used
# at once. Everything else the bot learned from itself waits for a person.
CONFIRMED_ORIGINS = frozenset({"edit", "reject"})


class Phase(StrEnum):
    ANALYSIS = "analysis"
    SEARCH = "search"
    WRITING = "writing"


class MemoryItem(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    phase: Phase
    trigger: str
    strategy: str
    kind: Kind
    sources: list[str] = Field(default_factory=list)  # episodes: "decision:12", "review:40"
    created: datetime = Field(default_factory=utcnow)
    uses: int = 0
    last_used: datetime | None = None
    last_useful: datetime | None = None
    weight: float = 1.0
    disabled: bool = False
    status: Status = "proposed"
    origin: Origin = "judge"
    decided_by: str | None = None  # who approved or rejected it (the moderator, for edits)
    decided_at: datetime | None = None
    reason: str = ""  # why it was refused or rejected

    def usable(self, cfg: MemoryConfig) -> bool:
        """Whether a check may be shown it: approved, or proposed where an admin turned on
        `use_proposed`; never disabled, rejected or refused."""
        if self.disabled:
            return False
        return self.status == "approved" or (self.status == "proposed" and cfg.use_proposed)

    def effective_weight(self, now: datetime, half_life_days: float) -> float:
        since = self.last_useful or self.created
        days = max(0.0, (now - since).total_seconds() / 86400)
        return self.weight * 0.5 ** (days / half_life_days)


class MemoryBank(Protocol):
    """What a check needs from memory; `MemoryIndex` and the bot's stored bank provide it."""

    def search(self, phase: Phase, query: str, k: int) -> list[tuple[MemoryItem, float]]: ...

    def record_uses(self, ids: Sequence[str], when: datetime) -> None: ...


# --- the index ---------------------------------------------------------------------------------


def _terms(text: str) -> frozenset[str]:
    return frozenset(terms(text))


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of two texts' content words: how near-duplicate items are found."""
    ta, tb = _terms(a), _terms(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


class MemoryIndex:
    """Items of one deployment, searchable by phase and trigger (see the module doc)."""

    def __init__(
        self,
        cfg: MemoryConfig,
        items: Iterable[MemoryItem] = (),
        *,
        embedder: Embedder | None = None,
    ) -> None:
        if cfg.retrieval == "dense" and embedder is None:
            raise ValueError("dense memory retrieval needs the embedding model")
        self.cfg = cfg
        self._embedder = embedder if cfg.retrieval == "dense" else None
        self._items: dict[str, MemoryItem] = {i.id: i for i in items}
        self._vectors: dict[str, np.ndarray] = {}
        self._postings: dict[Phase, dict[str, list[str]]] | None = None
        self._trigger_terms: dict[str, int] = {}
        self._matrix: dict[Phase, tuple[list[str], np.ndarray]] | None = None

    @property
    def items(self) -> list[MemoryItem]:
        return list(self._items.values())

    def get(self, item_id: str) -> MemoryItem | None:
        return self._items.get(item_id)

    def __len__(self) -> int:
        return len(self._items)

    def _dirty(self) -> None:
        self._postings = None
        self._matrix = None

    def _build(self) -> None:
        postings: dict[Phase, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._trigger_terms = {}
        for item in self._items.values():
            if not item.usable(self.cfg):
                continue
            words = _terms(item.trigger)
            self._trigger_terms[item.id] = len(words)
            for word in words:
                postings[item.phase][word].append(item.id)
        self._postings = postings
        if self._embedder is not None:
            missing = [i for i in self._items.values() if i.id not in self._vectors]
            if missing:
                vectors = self._embedder.encode([i.trigger for i in missing])
                self._vectors.update({i.id: v for i, v in zip(missing, vectors, strict=True)})
            matrix: dict[Phase, tuple[list[str], np.ndarray]] = {}
            for phase in Phase:
                ids = [
                    i.id for i in self._items.values() if i.phase is phase and i.usable(self.cfg)
                ]
                if ids:
                    matrix[phase] = (ids, np.stack([self._vectors[i] for i in ids]))
            self._matrix = matrix

    def search(self, phase: Phase, query: str, k: int) -> list[tuple[MemoryItem, float]]:
        """The top `k` enabled items of `phase` whose trigger matches `query` at least
        `min_score`, ranked by similarity times effective weight."""
        if self._postings is None:
            self._build()
        assert self._postings is not None
        scores: dict[str, float] = {}
        if self._embedder is not None:
            assert self._matrix is not None
            if phase in self._matrix:
                ids, matrix = self._matrix[phase]
                sims = matrix @ self._embedder.encode([query])[0]
                scores = {ids[n]: float(s) for n, s in enumerate(sims)}
        else:
            hits: dict[str, int] = defaultdict(int)
            phase_postings = self._postings.get(phase, {})
            for word in _terms(query):
                for item_id in phase_postings.get(word, ()):
                    hits[item_id] += 1
            scores = {i: n / self._trigger_terms[i] for i, n in hits.items()}
        now = utcnow()
        ranked = [
            (self._items[i], s, s * self._items[i].effective_weight(now, self.cfg.half_life_days))
            for i, s in scores.items()
            if s >= self.cfg.min_score
        ]
        ranked.sort(key=lambda r: r[2], reverse=True)
        return [(item, round(score, 4)) for item, score, _ in ranked[:k]]

    def record_uses(self, ids: Sequence[str], when: datetime) -> None:
        for item_id in ids:
            item = self._items.get(item_id)
            if item is not None:
                item.uses += 1
                item.last_used = when

    def add(self, new: MemoryItem, now: datetime | None = None) -> tuple[MemoryItem, list[str]]:
        """Insert `new`, or merge it into a near duplicate of its phase (sources joined, the
        older text kept, weight restored); then enforce the cap. Returns the item kept and the
        ids removed by the cap."""
        for item in self._items.values():
            if item.phase is new.phase and _merges(item, new) and self._near(item, new):
                item.sources = list(dict.fromkeys([*item.sources, *new.sources]))
                item.weight = max(item.weight, new.weight)
                item.last_useful = now or utcnow()
                return item, []
        self._items[new.id] = new
        self._dirty()
        return new, self._cap(now or utcnow())

    def set_status(self, item_id: str, stored: MemoryItem) -> None:
        """Takes a person's decision on an item (status, who, when, why) from `stored`."""
        item = self._items.get(item_id)
        if item is not None:
            for name in ("status", "decided_by", "decided_at", "reason"):
                setattr(item, name, getattr(stored, name))
            self._dirty()

    def _near(self, a: MemoryItem, b: MemoryItem) -> bool:
        both = overlap(f"{a.trigger} {a.strategy}", f"{b.trigger} {b.strategy}")
        return both >= self.cfg.merge_threshold

    def _cap(self, now: datetime) -> list[str]:
        excess = len(self._items) - self.cfg.max_items
        if excess <= 0:
            return []
        weakest = sorted(
            self._items.values(), key=lambda i: i.effective_weight(now, self.cfg.half_life_days)
        )[:excess]
        return self.remove([i.id for i in weakest])

    def remove(self, ids: Sequence[str]) -> list[str]:
        removed = [i for i in ids if self._items.pop(i, None) is not None]
        for item_id in removed:
            self._vectors.pop(item_id, None)
        if removed:
            self._dirty()
        return removed

    def set_disabled(self, item_id: str, disabled: bool) -> bool:
        item = self._items.get(item_id)
        if item is None:
            return False
        item.disabled = disabled
        self._dirty()
        return True

    def credit(self, ids: Sequence[str], mode: Mode, now: datetime) -> None:
        """An episode that used `ids` was judged `mode`: a useful use renews the items, an
        unsatisfactory one weakens them."""
        for item_id in ids:
            item = self._items.get(item_id)
            if item is None:
                continue
            if mode == "unsatisfactory":
                item.weight *= self.cfg.penalty
                continue
            item.last_useful = now
            if mode == "excellent":
                item.weight = min(1.0, item.weight / self.cfg.penalty)

    def decay(self, now: datetime) -> list[str]:
        """Deletes the items whose effective weight fell under `min_weight`; their ids."""
        faded = [
            i.id
            for i in self._items.values()
            if i.effective_weight(now, self.cfg.half_life_days) < self.cfg.min_weight
        ]
        return self.remove(faded)


def _merges(old: MemoryItem, new: MemoryItem) -> bool:
    """Whether `new` may be merged into `old` (which keeps its text and status): never into a
    disabled item, nor a refused one into anything, nor a confirmed item into one nobody
    confirmed; a proposal near an item a person approved or rejected adds only its source."""
    if old.disabled or new.status == "refused" or old.status == "refused":
        return False
    return old.status == new.status or (
        new.status == "proposed" and old.status in ("approved", "rejected")
    )


# --- retrieval into a check -------------------------------------------------------------------


class Recall:
    """One check's view of memory: guidance blocks per call, and what was shown."""

    def __init__(self, bank: MemoryBank | None, cfg: MemoryConfig) -> None:
        self.bank = bank if cfg.mode != "off" else None
        self.cfg = cfg
        self.used: list[MemoryUse] = []

    def guidance(self, phases: Sequence[Phase], query: str) -> str:
        """The `<memory>` blocks for a call of these phases ("" without matches); the items
        shown are added to `used`, and their use counts raised unless memory is frozen."""
        if self.bank is None or not query.strip():
            return ""
        shown: list[tuple[str, str, str, str]] = []
        ids: list[str] = []
        for phase in phases:
            for item, score in self.bank.search(phase, query, self.cfg.k):
                shown.append((item.phase.value, item.trigger, item.strategy, provenance(item)))
                ids.append(item.id)
                self.used.append(
                    MemoryUse(id=item.id, phase=item.phase.value, trigger=item.trigger, score=score)
                )
        if ids and self.cfg.mode == "learn":
            self.bank.record_uses(ids, utcnow())
        return memory_block(shown)


# --- distillation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Episode:
    """One finished episode and the feedback on it, as the distiller reads it."""

    source: str  # "decision:12", "review:40"
    signal: Signal
    claims: Sequence[str] = ()
    queries: Sequence[str] = ()
    reply: str | None = None
    mode: Mode | None = None  # the judge's, for signal "judge"
    feedback: str = ""  # the judge's reasons and lessons, a rejection reason, an edit diff
    actor: str | None = None  # the moderator, for a moderator's action
    # (where, text) of what strangers wrote in it (`memory_checks.stranger_texts`)
    strangers: Sequence[tuple[str, str]] = ()

    @classmethod
    def judged(
        cls,
        source: str,
        decision: Decision,
        judgment: Judgment,
        strangers: Sequence[tuple[str, str]] = (),
    ) -> Episode:
        """A judged decision as an episode; the judge's reasons and lessons are its feedback."""
        lessons = [f"{lesson.phase}: {lesson.lesson}" for lesson in judgment.lessons]
        return cls(
            strangers=strangers,
            source=source,
            signal="judge",
            mode=judgment.mode,
            claims=decision.trace.analysis.claims if decision.trace.analysis else (),
            queries=[q for r in decision.trace.rounds for q in r.queries],
            reply=decision.reply,
            feedback="; ".join([*judgment.reasons, *lessons]),
        )


_JUDGE_KIND: dict[str, Kind] = {
    "unsatisfactory": "avoid",
    "satisfactory": "improve",
    "excellent": "reuse",
}
_MODERATOR_KIND: dict[str, Kind] = {"reject": "avoid", "edit": "improve", "approve": "reuse"}


def kind_of(episode: Episode) -> Kind:
    """What the episode teaches (EvoNote's routing by mode, extended to moderator actions)."""
    if episode.signal == "judge":
        return _JUDGE_KIND[episode.mode or "satisfactory"]
    return _MODERATOR_KIND[episode.signal]


def edit_diff(before: str, after: str) -> str:
    """A moderator's edit, word by word: `-[removed]` and `+[added]` runs in text order."""
    a, b = before.split(), after.split()
    parts: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            parts.append(f"-[{' '.join(a[i1:i2])}]")
        if op in ("insert", "replace"):
            parts.append(f"+[{' '.join(b[j1:j2])}]")
    return " ".join(parts) or "(no change)"


def episode_text(episode: Episode) -> str:
    lines = [f"outcome: {episode.signal}" + (f" ({episode.mode})" if episode.mode else "")]
    lines += [f"claim: {c}" for c in episode.claims]
    lines += [f"query: {q}" for q in episode.queries]
    lines.append(f"reply: {episode.reply}" if episode.reply else "reply: (none: abstained)")
    lines.append(f"feedback: {episode.feedback or '(none)'}")
    return "\n".join(lines)


def distill(
    llm: LLMClient, ledger: CallLedger, episode: Episode, cfg: MemoryConfig
) -> list[MemoryItem]:
    """The items one LLM call distills from `episode` (not yet stored)."""
    limit = cfg.max_items_per_episode
    answer = llm.structured(
        "memory_distill",
        system=DISTILL_SYSTEM,
        user=distill_user(episode_text(episode), limit),
        schema=DistillAnswer,
        ledger=ledger,
    )
    kind = kind_of(episode)
    confirmed = episode.signal in CONFIRMED_ORIGINS
    items: list[MemoryItem] = []
    for raw in answer.items[:limit]:
        trigger, strategy = clean(raw.trigger), clean(raw.strategy)
        if not (trigger and strategy):
            continue
        copied = copied_from([raw.trigger, raw.strategy], episode.strangers)
        now = utcnow()
        items.append(
            MemoryItem(
                phase=Phase(raw.phase),
                trigger=trigger,
                strategy=strategy,
                kind=kind,
                sources=[episode.source],
                origin=episode.signal,
                status="refused" if copied else "approved" if confirmed else "proposed",
                decided_by="copy check" if copied else episode.actor if confirmed else None,
                decided_at=now if copied or confirmed else None,
                reason=copied or "",
            )
        )
    return items


def prompt_tokens_estimate(text: str) -> int:
    """Rough token count (4 characters a token) for the bench's added-prompt figures."""
    return math.ceil(len(text) / 4)
