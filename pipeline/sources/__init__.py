"""Who published a source: the publisher table, class rules for hosts it does not list,
and coverage of cited links.
"""
