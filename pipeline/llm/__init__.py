"""The one door to a language model: the client, the prompts (untrusted text kept as data)
and how answers are read.
"""
