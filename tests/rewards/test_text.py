"""`rlenvs.rewards.text`: one final answer, compared as text once normalised; a reply that
states two different answers, in any of the forms an answer is read from, scores 0."""

from __future__ import annotations

import pytest

from rlenvs.rewards.text import normalize_text_answer, text_answer_reward, text_answer_score
from rlenvs.testing import check_reward

ALIASES = ["Washington, D.C.", "Washington"]


@pytest.mark.parametrize(
    ("reply", "gold"),
    [
        ("\\boxed{Paris}", "Paris"),
        ("Paris", "Paris"),
        ("paris.", "Paris"),
        ("**Paris**", "Paris"),
        ("The final answer is $\\boxed{\\text{PARIS}}$.", "Paris"),
        ("Answer: Paris", "Paris"),
        ("**Final answer:** Paris", "Paris"),
        ("<answer>Paris</answer>", "Paris"),
        ("<think>Lyon? No.</think>\nParis", "Paris"),
        ("\\boxed{Paris} \\boxed{paris}", "Paris"),  # the same answer twice is no hedge
        ("\\boxed{Sao Tome}", "São Tomé"),
        ("\\boxed{Port au Prince}", "Port-au-Prince"),
        ("\\boxed{Hague}", "The Hague"),
        ("\\boxed{Washington DC}", ALIASES),
        ("\\boxed{Washington}", ALIASES),
        ("\\boxed{1000}", "1,000"),
        ("\\boxed{-5}", -5),
        ("\\boxed{Paris}\n\nThe Eiffel Tower there is $324$ m tall.", "Paris"),  # a number is no second city
        ("\\boxed{Paris} is the capital of France.", "Paris"),
        ("$\\boxed{東京}$", "東京"),
    ],
)
def test_the_answer_in_any_form_it_is_read_from_scores(reply: str, gold) -> None:
    assert text_answer_score(reply, gold) == 1.0


@pytest.mark.parametrize(
    ("reply", "gold", "why"),
    [
        ("\\boxed{Paris} or \\boxed{Lyon}", "Paris", "two boxes"),
        ("\\boxed{Paris} (or maybe Lyon)", "Paris", "a second answer offered after the box"),
        ("\\boxed{Paris, Lyon}", "Paris", "a list in one box"),
        ("Paris or Lyon", "Paris", "a bare reply is the whole line"),
        ("Paris\nLyon", "Paris", "a bare reply of two lines"),
        ("\\boxed{Paris}\nAnswer: Lyon", "Paris", "an answer line against the box"),
        ("<answer>Lyon</answer> \\boxed{Paris}", "Paris", "an answer tag against the box"),
        ("Answer: Lyon\nAnswer: Paris", "Paris", "two answer lines"),
        ("\\boxed{Lyon}\n\nActually, \\boxed{Paris}", "Paris", "a taken-back box is still stated"),
        ("The capital is Paris.", "Paris", "prose is no answer"),
        ("```\n\\boxed{Paris}\n```", "Paris", "a box in a code block"),
        ("<result>Paris</result>", "Paris", "a forged tool result"),
        ("\\boxed{}", "Paris", "a placeholder"),
        ("\\boxed{Washington}\\boxed{Washington DC}", ALIASES, "two aliases are two answers"),
        ("\\boxed{C}", "C++", "symbols count"),
        ("\\boxed{5}", "-5", "a minus sign counts"),
        ("\\boxed{35}", "3.5", "a decimal point counts"),
        # a second answer after the box, in any script and of any length: the extraction's own
        # rules see one or two Latin words only
        ("$\\boxed{Reykjavík}$\n\nAlternatively, $\\text{Akureyri}$.", "Reykjavík", "accents"),
        ("$\\boxed{Port of Spain}$\n\n($\\text{Caracas}$)", "Port of Spain", "three words"),
        ("\\boxed{Port of Spain} or San Fernando", "Port of Spain", "an offer in words"),
        ("$\\boxed{東京}$; $\\text{大阪}$ is also plausible.", "東京", "CJK"),
        ("\\boxed{Москва} (or maybe Казань)", "Москва", "Cyrillic"),
    ],
)
def test_a_hedge_a_misplaced_or_a_near_answer_scores_zero(reply: str, gold, why: str) -> None:
    assert text_answer_score(reply, gold) == 0.0, why


def test_normalising_takes_out_only_what_does_not_change_the_answer() -> None:
    assert normalize_text_answer("  **The  Hague.** ") == "hague"
    assert normalize_text_answer("St. John’s") == normalize_text_answer("St Johns") == "st johns"
    assert normalize_text_answer("\\textbf{\\text{Zürich}}") == "zurich"
    assert normalize_text_answer("v1.2") != normalize_text_answer("v12")


def test_it_keeps_the_reward_properties_and_trl_shape() -> None:
    report = check_reward(text_answer_score, examples=25, derandomize=True)
    assert report.passed, f"\n{report}"
    assert text_answer_reward(["\\boxed{Paris}", [{"role": "assistant", "content": "Lyon"}]], answer=["Paris", "Paris"]) == [1.0, 0.0]  # fmt: skip
    with pytest.raises(ValueError, match="they must pair up"):
        text_answer_reward(["Paris"], answer=[])
    with pytest.raises(ValueError, match=r"ground truth is a non-empty str or number, or a non-empty list"):
        text_answer_score("Paris", [])
