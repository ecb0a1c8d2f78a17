"""What the model must return and how its answer is read.

Structured steps send a strict JSON schema derived from the step's pydantic model (every
property required, no extra keys: what OpenAI's strict mode and vLLM/llama.cpp grammars
accept); the answer is checked (refused, cut off, empty), unfenced, parsed with the
depth-limited JSON reader and validated. A bad answer is an `InvalidAnswer` whose reason the
client sends back to the model once before giving up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

import pydantic

from pipeline import safejson

T = TypeVar("T", bound=pydantic.BaseModel)

REASON_CHARS = 400
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?```$", re.DOTALL)


# --- strict JSON schema -------------------------------------------------------------------

# Keywords whose value is a single sub-schema, or a list of sub-schemas.
_SUBSCHEMA_KEYS = frozenset({"items", "not", "contains", "additionalItems"})
_SUBSCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
# Dropped: titles are noise for the model, and defaults mean nothing once all fields are required
# (OpenAI's strict mode also rejects some of them).
_DROPPED_KEYS = frozenset({"title", "default"})


def strict_json_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form strict structured outputs accept.

    Every object gets `additionalProperties: false` and lists all its properties as required;
    `$defs` are inlined so that servers with partial `$ref` support (llama.cpp, older vLLM)
    see the same schema as OpenAI. Recursive models and free-form dicts cannot be expressed
    and raise `ValueError`.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return cast(dict[str, Any], _strict_node(schema, defs, ()))


def _strict_node(node: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name == ref or name not in defs:
            raise ValueError(f"unsupported $ref {ref!r}")
        if name in stack:
            raise ValueError(f"recursive model {name!r} cannot be used as a strict schema")
        target = _strict_node(defs[name], defs, (*stack, name))
        siblings = _strict_node({k: v for k, v in node.items() if k != "$ref"}, defs, stack)
        # Sibling keywords (a field's description) win over the referenced definition's.
        return {**target, **siblings}

    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: _strict_node(sub, defs, stack) for prop, sub in value.items()}
        elif key in _SUBSCHEMA_KEYS:
            out[key] = _strict_node(value, defs, stack)
        elif key in _SUBSCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [_strict_node(sub, defs, stack) for sub in value]
        elif key == "additionalProperties" and value not in (False, None):
            raise ValueError("free-form dict fields cannot be used in a strict schema")
        else:
            out[key] = value

    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        del out["allOf"]
        out = {**all_of[0], **out}

    if out.get("type") == "object" or "properties" in out:
        out.setdefault("type", "object")
        out["properties"] = out.get("properties", {})
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


# --- answer parsing -----------------------------------------------------------------------


class InvalidAnswer(Exception):
    def __init__(self, reason: str, raw: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


@dataclass(frozen=True)
class Answer:
    content: str
    finish_reason: str | None
    refusal: str | None


def strip_fence(text: str) -> str:
    """The body of a ```json fenced block, which lenient servers wrap around JSON; else text."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match.group("body").strip() if match else stripped


def check_answer(answer: Answer) -> str:
    """The answer's text, or `InvalidAnswer` if it is refused, truncated or empty."""
    if answer.refusal:
        raise InvalidAnswer(
            f"the model refused: {clip(answer.refusal, REASON_CHARS)}", answer.content
        )
    if answer.finish_reason == "length":
        raise InvalidAnswer("the answer was cut off at the token limit", answer.content)
    if not answer.content.strip():
        raise InvalidAnswer("the answer was empty", answer.content)
    return answer.content


def model_parser(schema: type[T]) -> Callable[[Answer], T]:
    def parse(answer: Answer) -> T:
        text = strip_fence(check_answer(answer))
        try:
            data = safejson.loads(text)  # nested too deep or a 5,000-digit number: invalid too
        except safejson.UntrustedJSONError as err:
            cause = err.__cause__
            why = (
                f"{cause.msg} at char {cause.pos}"
                if isinstance(cause, json.JSONDecodeError)
                else str(err)
            )
            raise InvalidAnswer(f"not valid JSON ({why})", answer.content) from err
        try:
            return schema.model_validate(data)
        except pydantic.ValidationError as err:
            # Inputs are left out: the reason is sent back to the model and stored in traces.
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
                for e in err.errors(include_url=False, include_input=False)
            )
            reason = f"does not match the schema ({clip(problems, REASON_CHARS)})"
            raise InvalidAnswer(reason, answer.content) from err

    return parse


def text_answer(answer: Answer) -> str:
    return check_answer(answer).strip()


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- schemas of the known-claim steps (`pipeline.claims.known`) ----------------------------


class MatchCheckAnswer(pydantic.BaseModel):
    """Whether a post's claim is the fact-checked claim: only "same" lets a match be used."""

    relation: Literal["same", "opposite", "different"]
    reason: str


class TranslationAnswer(pydantic.BaseModel):
    """The post's claims in English, in the order given."""

    english: list[str]


# --- schemas of the judge and memory steps (`pipeline.learning.judge`, `pipeline.learning.memory`)
# ------------

Rating = Literal["weak", "adequate", "strong"]
Mode = Literal["unsatisfactory", "satisfactory", "excellent"]
PhaseName = Literal["analysis", "search", "writing"]
Preference = Literal["first", "second", "tie"]


class GateAnswer(pydantic.BaseModel):
    passed: bool
    reason: str


class QualityAnswer(pydantic.BaseModel):
    rating: Rating
    reason: str


class LessonAnswer(pydantic.BaseModel):
    """What the episode teaches one phase: to avoid, improve or reuse."""

    phase: PhaseName
    lesson: str


class JudgeAnswer(pydantic.BaseModel):
    """A reply judged by three progressive gates, four utility qualities and a mode."""

    evidence_relevant: GateAnswer
    represented_correctly: GateAnswer
    helpful_style: GateAnswer
    understandable: QualityAnswer
    meaningful: QualityAnswer
    usable: QualityAnswer
    trustworthy: QualityAnswer
    mode: Mode
    reasons: list[str]
    lessons: list[LessonAnswer]


class AbstentionJudgeAnswer(pydantic.BaseModel):
    """An abstention judged: was staying silent right, given the evidence found?"""

    abstention_right: GateAnswer
    mode: Mode
    reasons: list[str]
    lessons: list[LessonAnswer]


class PairwiseAnswer(pydantic.BaseModel):
    """Two replies to one post compared per quality and overall (first/second as shown)."""

    understandable: Preference
    meaningful: Preference
    usable: Preference
    trustworthy: Preference
    overall: Preference
    reason: str


class StrategyAnswer(pydantic.BaseModel):
    phase: PhaseName
    trigger: str = pydantic.Field(description="the kind of post or claim this applies to")
    strategy: str = pydantic.Field(description="what to do or avoid in that phase")


class DistillAnswer(pydantic.BaseModel):
    """Reusable, post-independent strategies distilled from one episode's feedback."""

    items: list[StrategyAnswer]
