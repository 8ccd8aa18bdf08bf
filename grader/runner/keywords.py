"""`-k EXPR`: which checks a run selects, in pytest's -k syntax (the grader once ran its checks
through pytest, and the syntax stays what students and instructors already type).

    expr:     and_expr ("or" and_expr)*
    and_expr: not_expr ("and" not_expr)*
    not_expr: "not" not_expr | "(" expr ")" | word
    word:     letters, digits and _ - . : + [ ] / \\

A word matches a check when it is part of one of the check's names, ignoring case: its id
(`finish-at-expiry`), its function's name (`test_finish_exactly_at_expiry`), its module's file
(`test_boundaries.py`) or its rule family (`boundaries`). An empty expression selects every check.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

_TOKEN = re.compile(r"\s*(?:(\()|(\))|([\w:+\-.\[\]/\\]+))")
_KEYWORDS = {"or", "and", "not"}


class BadExpression(ValueError):
    """The expression cannot be read (the message says where)."""


def matcher(expression: str | None) -> Callable[[Iterable[str]], bool]:
    """A test of a check's names against `expression` (raises BadExpression)."""
    tokens = _tokens(expression or "")
    if not tokens:
        return lambda names: True
    parser = _Parser(tokens, expression or "")
    tree = parser.expr()
    if parser.position < len(tokens):
        raise parser.error("unexpected")
    return lambda names: _evaluate(tree, [n.lower() for n in names])


def _tokens(expression: str) -> list[str]:
    tokens, position = [], 0
    while position < len(expression):
        if expression[position:].strip() == "":
            break
        match = _TOKEN.match(expression, position)
        if match is None or match.end() == position:
            bad = expression[position:].lstrip()[:1]
            raise BadExpression(f"unexpected character {bad!r} at column "
                                f"{len(expression) - len(expression[position:].lstrip()) + 1}")
        tokens.append(next(g for g in match.groups() if g is not None))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[str], text: str):
        self.tokens, self.text, self.position = tokens, text, 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.position += 1
        return token

    def error(self, what: str) -> BadExpression:
        token = self.peek()
        found = f"{token!r}" if token is not None else "the end"
        return BadExpression(f"{what} {found} in {self.text!r}")

    def expr(self):
        tree = self.and_expr()
        while self.peek() == "or":
            self.take()
            tree = ("or", tree, self.and_expr())
        return tree

    def and_expr(self):
        tree = self.not_expr()
        while self.peek() == "and":
            self.take()
            tree = ("and", tree, self.not_expr())
        return tree

    def not_expr(self):
        token = self.peek()
        if token == "not":
            self.take()
            return ("not", self.not_expr())
        if token == "(":
            self.take()
            tree = self.expr()
            if self.peek() != ")":
                raise self.error("expected ')', found")
            self.take()
            return tree
        if token is None or token == ")" or token in _KEYWORDS:
            raise self.error("expected a word, found")
        self.take()
        return ("word", token.lower())


def _evaluate(tree, names: list[str]) -> bool:
    op = tree[0]
    if op == "word":
        return any(tree[1] in name for name in names)
    if op == "not":
        return not _evaluate(tree[1], names)
    if op == "and":
        return _evaluate(tree[1], names) and _evaluate(tree[2], names)
    return _evaluate(tree[1], names) or _evaluate(tree[2], names)
