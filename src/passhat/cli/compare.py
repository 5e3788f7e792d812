"""`passhat compare`."""
