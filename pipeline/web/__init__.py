"""The web, read safely: URL rules, the SSRF guard, fetching with caps and deadlines, links
resolved and pages turned into text.
"""
