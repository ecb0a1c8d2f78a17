"""Community Notes on top of decisions: which become notes, admission figures, what a
moderator sees, the writer's ledger and the adapter's set-up.
"""
