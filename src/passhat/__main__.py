"""`python -m passhat` is the `passhat` command."""

from passhat.cli import command

command()
