"""Reports: plain data for machines (`summary`), rich tables for people (`terminal`)."""

ROWS_SHOWN = 30
"""Cases listed in a terminal table unless --all is given: a table of 100,000 rows
helps nobody, and rendering it would cost more than computing every figure. Here,
not in `terminal`, so that `passhat report`'s options name it without loading the
tables and the statistics (they load while the store is read: cli/read.py)."""
