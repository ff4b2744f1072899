"""The paper's own settings and analyses: constants, shared frames and fits, chapters' runs.

Importing this package is cheap; import its modules (``hca.paper.constants``,
``hca.paper.replication``, ...) for what they hold.
"""
