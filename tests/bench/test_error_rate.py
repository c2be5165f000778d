from bench.error_rate import edit_distance


def test_edit_distance_counts_substitutions_insertions_and_deletions() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance(["the", "cat"], ["the", "cat", "sat"]) == 1
    assert edit_distance("今日は", "") == 3
    assert edit_distance("", "") == 0


def test_a_custom_match_rule_is_used_for_substitutions() -> None:
    neutral_matches_any = lambda a, b: a == b or "5" in (a[-1], b[-1])  # noqa: E731
    assert edit_distance(["ge4"], ["ge5"]) == 1
    assert edit_distance(["ge4"], ["ge5"], neutral_matches_any) == 0
