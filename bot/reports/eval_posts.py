"""The HTML report of `factnote eval posts`: one self-contained page (charts as inline SVG),
drawn with the audit report's bar charts (`bot.reports.audit.bar_chart`) and a risk-coverage
curve."""

from __future__ import annotations

import io
from typing import Any

import jinja2
from markupsafe import Markup
from matplotlib.figure import Figure

from bot.reports.audit import bar_chart

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>factnote eval posts</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}
</style></head><body>
<h1>factnote eval posts</h1>
<p>{{ settings.data }}: platform {{ settings.platform }}, judge {{ settings.judge }},
memory {{ settings.memory }}</p>
<table>
{% for name, value in headline %}<tr><th>{{ name }}</th><td>{{ value }}</td></tr>
{% endfor %}</table>
{% for chart in charts %}<figure>{{ chart }}</figure>
{% endfor %}
<h2>Posts</h2>
<table><tr><th>id</th><th>status</th><th>predicted</th><th>gold</th><th>confidence</th>
<th>reply</th></tr>
{% for p in posts %}<tr><td>{{ p.id }}</td><td>{{ p.status }}</td><td>{{ p.predicted }}</td>
<td>{{ p.gold or "" }}</td><td>{{ "%.2f"|format(p.confidence) }}</td><td>{{ p.reply or "" }}</td>
</tr>
{% endfor %}</table>
</body></html>
"""

_HEADLINE = (
    "posts",
    "with_gold",
    "accuracy",
    "macro_f1",
    "answered_accuracy",
    "abstention_rate",
    "length_compliance",
    "url_grounding",
)


def risk_coverage_chart(points: list[dict[str, Any]]) -> Markup:
    """Accuracy of the answers kept against the share of posts answered, one point per
    confidence threshold."""
    kept = [p for p in points if p["accuracy"] is not None]
    fig = Figure(figsize=(7.0, 2.8))
    ax = fig.subplots()
    ax.plot([p["coverage"] for p in kept], [p["accuracy"] for p in kept], marker="o")
    for p in kept:
        ax.annotate(f"c≥{p['threshold']}", (p["coverage"], p["accuracy"]), fontsize=7)
    ax.set_xlabel("coverage (share of posts with gold answered)")
    ax.set_ylabel("accuracy of answers")
    ax.set_title("Risk-coverage")
    ax.spines[["top", "right"]].set_visible(False)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    # matplotlib escapes the text it writes; the labels here are our own numbers anyway.
    return Markup(svg[svg.index("<svg") :])  # noqa: S704


def render(report: dict[str, Any]) -> str:
    summary = report["summary"]
    charts = [
        risk_coverage_chart(summary["risk_coverage"]),
        bar_chart(sorted(summary["statuses"].items()), "Outcomes"),
    ]
    if summary["tiers_cited"]:
        charts.append(bar_chart(sorted(summary["tiers_cited"].items()), "Evidence tiers cited"))
    judge = summary.get("judge")
    if judge:
        rates = [(g, r or 0.0) for g, r in judge["gate_pass_rates"].items()]
        charts.append(bar_chart(rates, "Judge: gate pass rate (replies)"))
        charts.append(bar_chart(sorted(judge["modes"].items()), "Judge: modes"))
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_PAGE).render(
        settings=report["settings"],
        headline=[(k, summary[k]) for k in _HEADLINE],
        charts=charts,
        posts=report["posts"],
    )
