"""Reports: plain data for machines (`summary`), rich tables for people (`terminal`)."""
