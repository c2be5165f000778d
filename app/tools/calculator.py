"""Exact arithmetic for "what is 17 times 23": a walk over Python's ``ast`` of the
expression that allows numbers, + - * / // % ** and brackets, nothing else (no names, no
calls, no ``eval``). Numbers are fractions, so 0.1 + 0.2 is 0.3 and 1/3 stays a third
until it is written out; powers and sizes are capped so no answer takes long to work out.
"""

from __future__ import annotations

import ast
import operator
import re
import threading
from collections.abc import Callable
from fractions import Fraction

from app.tools import phrases
from app.tools.spec import Arguments, ToolResult, ToolSpec

MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 1000
MAX_BITS = 4096
"""A numerator or denominator past this many bits (about 1,200 digits) is refused."""
_BINARY: dict[type[ast.operator], Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: lambda a, b: Fraction(a // b), ast.Mod: operator.mod,
}
_SYMBOLS = str.maketrans({"\u00d7": "*", "\u00f7": "/", "\u2212": "-", "^": "**"})
"""The multiplication, division and minus signs, and a caret for a power."""
_TIMES_X = re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])")


class CalculationError(ValueError):
    """Not arithmetic this calculator does; the message says why, for the model."""


def evaluate(expression: str) -> Fraction:
    """The exact value of ``expression``."""
    text = _TIMES_X.sub("*", expression.translate(_SYMBOLS)).replace(",", "")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculationError("the expression is too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalculationError("that is not an arithmetic expression") from exc
    return _value(tree.body)


def _value(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(Fraction(str(node.value)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        apply = _BINARY.get(type(node.op))
        if apply is None:
            raise CalculationError("only + - * / // % ** and brackets are allowed")
        if right == 0 and isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            raise CalculationError("division by zero")
        return _checked(apply(left, right))
    raise CalculationError("only numbers, + - * / // % ** and brackets are allowed")


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise CalculationError("only whole-number powers are exact")
    if abs(exponent) > MAX_EXPONENT:
        raise CalculationError(f"powers above {MAX_EXPONENT} are not worked out")
    if base == 0 and exponent < 0:
        raise CalculationError("division by zero")
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if bits * abs(int(exponent)) > MAX_BITS:
        raise CalculationError("the answer would be too large")
    return _checked(base ** int(exponent))


def _checked(value: Fraction) -> Fraction:
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_BITS:
        raise CalculationError("the answer would be too large")
    return value


def written(value: Fraction, places: int = 10) -> tuple[str, bool]:
    """``value`` as digits, and whether that is exact (1/3 -> ("0.3333333333", False))."""
    if value.denominator == 1:
        return str(value.numerator), True
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    whole, rest = divmod(magnitude.numerator, magnitude.denominator)
    digits = ""
    for _ in range(places):
        rest *= 10
        digit, rest = divmod(rest, magnitude.denominator)
        digits += str(digit)
        if rest == 0:
            break
    return f"{sign}{whole}.{digits.rstrip('0') or '0'}", rest == 0


_WORDS = [
    (r"\bmultiplied\s+by\b|\btimes\b|かける|掛ける|乘以|乘", "*"),
    (r"\bdivided\s+by\b|\bover\b|割る|わる|除以", "/"),
    (r"\bplus\b|\band\b|足す|たす|加上|加", "+"),
    (r"\bminus\b|\btake\s+away\b|引く|ひく|减去|减", "-"),
    (r"\bto\s+the\s+power\s+of\b|\bto\s+the\b", "**"),
    (r"\bsquared\b", "** 2"), (r"\bcubed\b", "** 3"),
    (r"(?<=\d)\s*x\s*(?=\d)", "*"),
]
_SPOKEN_OK = re.compile(r"[\d\s.+\-*/()%]+")


def spoken_expression(text: str) -> str | None:
    """"17 times 23" -> "17 * 23"; None when the words are not (only) arithmetic. Number
    words should already be digits."""
    out = text.lower().replace(",", "")
    for pattern, symbol in _WORDS:
        out = re.sub(pattern, f" {symbol} ", out)
    out = " ".join(out.split())
    if not out or not _SPOKEN_OK.fullmatch(out) or not re.search(r"\d\s*[-+*/%]", out):
        return None
    return out


class Calculator:
    """The ``calculate`` tool."""

    spec = ToolSpec(
        name="calculate",
        description="Work out arithmetic exactly. Use it for any sum the user asks for "
                    "instead of guessing.",
        parameters={"type": "object", "properties": {
            "expression": {"type": "string", "maxLength": MAX_EXPRESSION_CHARS,
                           "description": "Digits with + - * / // % ** and brackets, "
                                          "e.g. (17 * 23) / 4"}},
            "required": ["expression"], "additionalProperties": False},
        side_effects=False,
    )

    def run(self, arguments: Arguments, cancel: threading.Event,
            language: str = "en") -> ToolResult:
        expression = str(arguments["expression"])
        try:
            value = evaluate(expression)
        except CalculationError as exc:
            return ToolResult.failure(f"{expression}: {exc}.")
        digits, exact = written(value)
        said = digits if exact else f"about {digits}"
        return ToolResult(f"{expression} = {said}" + ("" if exact else f" (exactly {value})"),
                          phrases.result(said if language == "en" or exact else digits,
                                         language))
