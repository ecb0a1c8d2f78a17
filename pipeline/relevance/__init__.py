"""Which parts of a page speak to the post: the sentence-embedding model, lexical
normalisation, the cheap pre-filter and the page scores.
"""
