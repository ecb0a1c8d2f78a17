"""Evidence retrieval in rounds: search tier by tier, fetch and score pages, extract passages
that refute or add context, and stop when the evidence decides.
"""
