"""Rule-based score for MATH-style answers written as \\boxed{...}.

Owns extraction of the last \\boxed{} (or \\fbox{}) answer with balanced braces and a string
normalisation (spacing, \\left/\\right, \\dfrac, units, degrees, trailing periods, simple
fractions and decimals) under which equivalent answers compare equal. It does not do symbolic
algebra.
"""
from __future__ import annotations

import re

__all__ = ["last_boxed_only_string", "remove_boxed", "normalize_answer", "is_equiv", "compute_score"]


def last_boxed_only_string(text: str) -> str | None:
    """Return the last "\\boxed{...}" / "\\fbox{...}" / "\\boxed x" span of `text`, or None."""
    idx = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if idx < 0:
        return None
    head = "\\boxed" if text.startswith("\\boxed", idx) else "\\fbox"
    rest = text[idx + len(head):]
    if rest.startswith(" "):  # "\boxed 5" form: up to the next "$" or end
        return head + " " + rest[1:].split("$")[0].strip()
    if not rest.startswith("{"):
        return None
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return head + rest[: i + 1]
    return None  # unbalanced braces: no complete answer


def remove_boxed(boxed: str) -> str:
    """Strip the "\\boxed{" ... "}" wrapper returned by `last_boxed_only_string`."""
    for head in ("\\boxed", "\\fbox"):
        if boxed.startswith(head + " "):
            return boxed[len(head) + 1:]
        if boxed.startswith(head + "{") and boxed.endswith("}"):
            return boxed[len(head) + 1: -1]
    raise ValueError(f"not a boxed answer: {boxed!r}")


_UNIT_WORDS = (
    r"(?:units?|cm|centimeters?|meters?|inches|inch|feet|foot|degrees?|dollars?|cents?|mph|"
    r"hours?|minutes?|seconds?)"
)


def _fix_fracs(s: str) -> str:
    # "\frac12" -> "\frac{1}{2}", "\frac1{2}" -> "\frac{1}{2}"
    def repl(m: re.Match) -> str:
        a, b = m.group(1), m.group(2)
        a = a if a.startswith("{") else "{" + a + "}"
        b = b if b.startswith("{") else "{" + b + "}"
        return "\\frac" + a + b

    return re.sub(r"\\frac(\{[^{}]*\}|[^{}\\])(\{[^{}]*\}|[^{}\\])", repl, s)


def _fix_sqrt(s: str) -> str:
    return re.sub(r"\\sqrt([^{\s\\])", r"\\sqrt{\1}", s)


def normalize_answer(answer: str) -> str:
    """Canonical string form of a MATH answer (see the module docstring for what is normalised)."""
    s = str(answer).strip()
    s = s.replace("\n", "").replace("\\!", "").replace("\\,", "").replace("\\;", "").replace("\\ ", "")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("dfrac", "frac").replace("tfrac", "frac")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\circ", "")
    s = s.replace("\\$", "").replace("$", "").replace("\\%", "").replace("%", "")
    s = re.sub(r"\\text\{\s*" + _UNIT_WORDS + r"\s*\}", "", s)
    s = re.sub(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\s+" + _UNIT_WORDS + r"$", "", s)
    s = s.replace(" .", " 0.").replace("{.", "{0.")
    if s.startswith("."):
        s = "0" + s
    # "x = 5" -> "5" when the left side is a short variable name
    if s.count("=") == 1 and len(s.split("=")[0].strip()) <= 2:
        s = s.split("=")[1]
    s = s.replace(" ", "")
    s = _fix_sqrt(_fix_fracs(s))
    s = s.rstrip(".")
    if s == "0.5":
        s = "\\frac{1}{2}"
    # a/b with plain integers -> \frac{a}{b}
    m = re.fullmatch(r"(-?\d+)/(\d+)", s)
    if m:
        s = f"\\frac{{{m.group(1)}}}{{{m.group(2)}}}"
    # integers with thousands separators, trailing ".0"
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    if re.fullmatch(r"-?\d+\.0+", s):
        s = s.split(".")[0]
    return s


def is_equiv(a: str | None, b: str | None) -> bool:
    """True when both answers exist and normalise to the same string."""
    if a is None or b is None:
        return False
    try:
        return normalize_answer(a) == normalize_answer(b)
    except Exception:  # normalisation is best effort; fall back to raw comparison
        return a.strip() == b.strip()


def compute_score(solution_str: str, ground_truth: str) -> float:
    """1.0 when the last boxed answer of `solution_str` is equivalent to `ground_truth`, else 0.0.

    `ground_truth` may itself be a full solution containing \\boxed{}; its boxed part is used.
    """
    boxed = last_boxed_only_string(solution_str)
    if boxed is None:
        return 0.0
    truth = str(ground_truth)
    truth_boxed = last_boxed_only_string(truth)
    if truth_boxed is not None:
        truth = remove_boxed(truth_boxed)
    return 1.0 if is_equiv(remove_boxed(boxed), truth) else 0.0
