"""`passhat check`."""
