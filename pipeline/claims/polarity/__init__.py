"""Does a post say what a fact-checked claim says, or something that only sounds the same?
Negations, antonyms, numbers, names and key predicates, compared without an LLM.
"""
