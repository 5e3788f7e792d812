"""The built-in environments, each written on the public protocol of passhat.env.

`ticket` (the clarifier's world), `board` (a Trello-like board) and `tools` (the
declarative environment: tools declared in suite.yaml). suite.yaml names them by
these words, which stand for import paths (`passhat.env.BUILTIN_ENVIRONMENTS`)
loaded exactly as a user's `file.py:Class` is.
"""
