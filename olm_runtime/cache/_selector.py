"""Label selectors: parse the API server's string syntax or a `metav1.LabelSelector`, match label maps.

The grammar is the one `kubectl get -l` and `?labelSelector=` accept:

    selector    := requirement ("," requirement)*            (empty: matches everything)
    requirement := KEY | "!" KEY                             (exists / does not exist)
                 | KEY ("=" | "==" | "!=") VALUE             (VALUE may be empty)
                 | KEY ("in" | "notin") "(" VALUE ("," VALUE)* ")"
                 | KEY (">" | "<") INTEGER

Matching follows the server: `!=` and `notin` also match objects that lack the label; `>`/`<` need
the label to hold an integer. Requirements are kept sorted by key, so two spellings of the same
selector render (`str`) and compare equal, which is what lets informers be shared between them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LabelSelector",
    "Operator",
    "Requirement",
    "SelectorError",
    "parse_selector",
    "selector_from_dict",
]

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(_NAME)
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INTEGER_RE = re.compile(r"[-+]?[0-9]+")
_SPECIAL = frozenset("!=(),<>")


class SelectorError(ValueError):
    """The selector is not valid; the message names the offending part."""


class Operator(enum.Enum):
    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = ">"
    LESS_THAN = "<"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One clause of a selector, e.g. `tier in (web,api)`; build it with `Requirement.of`."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    """Sorted and without duplicates; one value for `=`, `!=`, `>`, `<`; none for exists checks."""

    @classmethod
    def of(cls, key: str, operator: Operator, values: Iterable[str] = ()) -> Requirement:
        """A validated requirement (raises `SelectorError` with the reason)."""
        _check_key(key)
        vals = tuple(sorted(set(values)))
        if operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
            if vals:
                raise SelectorError(f"{key}: values must be empty for {operator.value!r}")
        elif operator in (Operator.IN, Operator.NOT_IN):
            if not vals:
                raise SelectorError(f"{key}: {operator.value!r} needs at least one value")
        elif len(vals) != 1:
            raise SelectorError(f"{key}: {operator.value!r} needs exactly one value")
        if operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
            if not _INTEGER_RE.fullmatch(vals[0]):
                raise SelectorError(f"{key}: {operator.value!r} needs an integer, got {vals[0]!r}")
        else:
            for value in vals:
                _check_value(key, value)
        return cls(key, operator, vals)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op is Operator.EQUALS or op is Operator.IN:
            return value is not None and value in self.values
        if op is Operator.NOT_EQUALS or op is Operator.NOT_IN:
            return value is None or value not in self.values
        if value is None or not _INTEGER_RE.fullmatch(value):
            return False
        if op is Operator.GREATER_THAN:
            return int(value) > int(self.values[0])
        return int(value) < int(self.values[0])

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(self.values)})"
        return f"{self.key}{op.value}{self.values[0]}"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """Requirements that must all hold (logical AND); the empty selector matches every object."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether a label map (an object's `metadata.labels`, possibly absent) satisfies every clause."""
        if not self.requirements:
            return True
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """`matches` applied to `obj["metadata"]["labels"]`."""
        return self.matches((obj.get("metadata") or {}).get("labels"))

    def __str__(self) -> str:
        """The canonical string form, accepted by `parse_selector` and by the API server."""
        return ",".join(str(r) for r in self.requirements)


def _sorted(requirements: Iterable[Requirement]) -> LabelSelector:
    ordered = sorted(requirements, key=lambda r: (r.key, r.operator.value, r.values))
    return LabelSelector(tuple(dict.fromkeys(ordered)))


def _check_key(key: str) -> None:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(prefix)):
        raise SelectorError(f"invalid label key {key!r}: the prefix must be a DNS subdomain")
    if not name or len(name) > 63 or not _NAME_RE.fullmatch(name):
        raise SelectorError(
            f"invalid label key {key!r}: the name must be 63 characters or fewer, alphanumeric, "
            "'-', '_' or '.', starting and ending with an alphanumeric character"
        )


def _check_value(key: str, value: str) -> None:
    if value and (len(value) > 63 or not _NAME_RE.fullmatch(value)):
        raise SelectorError(
            f"invalid value {value!r} for label {key!r}: 63 characters or fewer, alphanumeric, "
            "'-', '_' or '.', starting and ending with an alphanumeric character"
        )


def _tokens(text: str) -> list[str]:
    """Split into identifiers and the operators `! = == != ( ) , < >`; whitespace separates."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "=!" and i + 1 < n and text[i + 1] == "=":
            out.append(c + "=")
            i += 2
        elif c in _SPECIAL:
            out.append(c)
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            out.append(text[i:j])
            i = j
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, what: str) -> SelectorError:
        return SelectorError(f"invalid label selector {self.text!r}: {what}")

    def identifier(self, what: str) -> str:
        token = self.take()
        if token is None or token in _SPECIAL or token in ("==", "!="):
            raise self.fail(f"expected {what}, found {token or 'end of input'!r}")
        return token

    def selector(self) -> LabelSelector:
        requirements: list[Requirement] = []
        if self.peek() is None:
            return LabelSelector()
        while True:
            requirements.append(self.requirement())
            token = self.take()
            if token is None:
                return _sorted(requirements)
            if token != ",":
                raise self.fail(f"expected ',' between requirements, found {token!r}")

    def requirement(self) -> Requirement:
        try:
            if self.peek() == "!":
                self.take()
                return Requirement.of(self.identifier("a label key"), Operator.DOES_NOT_EXIST)
            key = self.identifier("a label key")
            token = self.peek()
            if token is None or token == ",":
                return Requirement.of(key, Operator.EXISTS)
            self.take()
            if token in ("=", "=="):
                return Requirement.of(key, Operator.EQUALS, [self.optional_value()])
            if token == "!=":
                return Requirement.of(key, Operator.NOT_EQUALS, [self.optional_value()])
            if token in (">", "<"):
                op = Operator.GREATER_THAN if token == ">" else Operator.LESS_THAN
                return Requirement.of(key, op, [self.identifier("an integer")])
            if token in ("in", "notin"):
                op = Operator.IN if token == "in" else Operator.NOT_IN
                return Requirement.of(key, op, self.value_set())
            raise self.fail(f"unexpected {token!r} after key {key!r}")
        except SelectorError as e:
            if str(e).startswith("invalid label selector"):
                raise
            raise self.fail(str(e)) from None

    def optional_value(self) -> str:
        token = self.peek()
        if token is None or token == ",":
            return ""
        return self.identifier("a value")

    def value_set(self) -> list[str]:
        if self.take() != "(":
            raise self.fail("expected '(' after 'in'/'notin'")
        values: list[str] = []
        expect_value = True
        while True:
            token = self.take()
            if token is None:
                raise self.fail("missing ')'")
            if token == ")":
                if values and expect_value:
                    values.append("")  # "(a,)" holds the empty value, as on the server
                return values
            if token == ",":
                if expect_value:
                    values.append("")
                expect_value = True
                continue
            if not expect_value or token in _SPECIAL or token in ("==", "!="):
                raise self.fail(f"unexpected {token!r} in a value set")
            values.append(token)
            expect_value = False


def parse_selector(text: str) -> LabelSelector:
    """Parse the string form (`app=web,tier in (a,b),!canary`); raises `SelectorError`."""
    return _Parser(text).selector()


_EXPRESSION_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def selector_from_dict(selector: Mapping[str, Any]) -> LabelSelector:
    """Convert a `metav1.LabelSelector` (`matchLabels` and `matchExpressions`) as found in specs.

    An empty mapping gives the empty selector, which matches everything (as in a Deployment's
    `spec.selector`); APIs where an absent selector means "nothing" must check for `None` first.
    """
    requirements: list[Requirement] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        requirements.append(Requirement.of(str(key), Operator.EQUALS, [str(value)]))
    for expression in selector.get("matchExpressions") or ():
        operator = _EXPRESSION_OPERATORS.get(str(expression.get("operator")))
        if operator is None:
            raise SelectorError(
                f"invalid operator {expression.get('operator')!r} for key {expression.get('key')!r}: "
                f"use one of {', '.join(_EXPRESSION_OPERATORS)}"
            )
        requirements.append(
            Requirement.of(
                str(expression.get("key") or ""), operator, map(str, expression.get("values") or ())
            )
        )
    return _sorted(requirements)
