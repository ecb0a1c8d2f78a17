"""Web search behind one interface: the providers (Brave, Google, SearXNG, Serper, the local
index) and the tiered search that asks them publisher tier by publisher tier.
"""
