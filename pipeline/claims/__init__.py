"""Known claims: published fact-checks (and our approved answers) imported, kept and matched
to posts, with the polarity rules that tell a repeat from a reversal.
"""
