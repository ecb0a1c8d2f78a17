"""Evaluation on labelled data: CLEF 2024 Task 5 (authority retrieval and verdicts), claim
matching, and the whole bot on labelled posts. Kept out of the production packages, which must
never import it (import-linter checks it); only the `eval` command's front ends
(bot/commands/evaluate.py, bot/commands/eval_posts.py) call in."""
