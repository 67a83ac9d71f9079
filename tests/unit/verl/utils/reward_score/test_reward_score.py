"""Hand-checked cases for the rule-based reward scores."""
import pytest

from verl.utils.reward_score import default_compute_score, get_score_fn, gsm8k
from verl.utils.reward_score import math as math_score


@pytest.mark.parametrize(
    "text, method, expected",
    [
        ("She pays 3 * 4 = 12 dollars.\n#### 12", "strict", "12"),
        ("#### 1,234", "strict", "1234"),
        ("#### $-5.50", "strict", "-5.5"),
        ("first #### 3 then #### 4", "strict", "4"),
        ("The answer is 72.", "strict", None),
        ("The answer is 72.", "flexible", "72"),
        ("3 apples and 10.0 pears", "flexible", "10"),
        ("no number here", "flexible", None),
    ],
)
def test_gsm8k_extraction(text, method, expected):
    assert gsm8k.extract_solution(text, method=method) == expected


def test_gsm8k_score():
    assert gsm8k.compute_score("so #### 18", "18") == 1.0
    assert gsm8k.compute_score("so #### 17", "18") == 0.0
    assert gsm8k.compute_score("so #### 17", "18", format_score=0.1) == 0.1
    assert gsm8k.compute_score("so 18", "18") == 0.0  # strict needs "####"
    assert gsm8k.compute_score("so 18", "18", method="flexible") == 1.0
    # A full reference solution as ground truth
    assert gsm8k.compute_score("#### 6", "2 + 4 = 6\n#### 6") == 1.0
    with pytest.raises(ValueError, match="loose"):
        gsm8k.extract_solution("1", method="loose")


@pytest.mark.parametrize(
    "text, boxed",
    [
        ("so \\boxed{\\frac{1}{2}}.", "\\boxed{\\frac{1}{2}}"),
        ("\\boxed{1} then \\boxed{2}", "\\boxed{2}"),
        ("\\fbox{x^{2}}", "\\fbox{x^{2}}"),
        ("$\\boxed 7$", "\\boxed 7"),
        ("\\boxed{unbalanced", None),
        ("no box", None),
    ],
)
def test_math_last_boxed(text, boxed):
    assert math_score.last_boxed_only_string(text) == boxed


@pytest.mark.parametrize(
    "a, b, equal",
    [
        ("\\dfrac{1}{2}", "\\frac12", True),
        ("0.5", "\\frac{1}{2}", True),
        ("1/2", "\\frac{1}{2}", True),
        ("x = 5", "5", True),
        ("10\\text{ cm}", "10", True),
        ("90^\\circ", "90", True),
        ("\\left( 1, 2 \\right)", "(1,2)", True),
        ("1,000", "1000", True),
        ("3.0", "3", True),
        ("\\sqrt2", "\\sqrt{2}", True),
        ("\\frac{1}{3}", "\\frac{1}{2}", False),
        ("2", "-2", False),
    ],
)
def test_math_equivalence(a, b, equal):
    assert math_score.is_equiv(a, b) is equal


def test_math_score_and_dispatch():
    assert math_score.compute_score("Thus $\\boxed{\\dfrac{3}{4}}$.", "\\frac34") == 1.0
    assert math_score.compute_score("Thus 3/4.", "\\frac34") == 0.0  # nothing boxed
    assert math_score.compute_score("\\boxed{4}", "we get \\boxed{4}") == 1.0
    assert default_compute_score("lighteval/MATH", "\\boxed{4}", "4") == 1.0
    assert default_compute_score("openai/gsm8k", "#### 4", "4") == 1.0
    assert default_compute_score("openai/gsm8k", "#### 5", "4") == 0.0
    with pytest.raises(ValueError, match="unknown_set") as err:
        get_score_fn("unknown_set")
    assert "openai/gsm8k" in str(err.value)
