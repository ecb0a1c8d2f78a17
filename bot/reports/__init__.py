"""What the bot did, for people: the audit report, its detail and Community Notes section, the
eval report and the export.
"""
