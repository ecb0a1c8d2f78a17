"""The platforms, one folder each (a single module for the local inbox): each speaks its
platform's API and turns what it reads into the records of `adapters.base`, and carries the
settings model of its `[section]`. Adapters know nothing of the pipeline, the bot or storage.
"""
