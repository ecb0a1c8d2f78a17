"""Reading the post: its text, the post it quotes or answers, platform boilerplate set aside,
and the claims worth checking in it.
"""
