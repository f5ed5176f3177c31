"""Label selectors: the server's string syntax and metav1.LabelSelector, matched as the server does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olm_runtime import cache

LABELS = {"app": "web", "tier": "frontend", "version": "3", "empty": ""}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        pytest.param("", True, id="empty-matches-everything"),
        pytest.param("app=web", True, id="equals"),
        pytest.param("app==web", True, id="double-equals"),
        pytest.param("app=db", False, id="equals-other-value"),
        pytest.param("app!=db", True, id="not-equals"),
        pytest.param("missing!=x", True, id="not-equals-matches-absent-label"),
        pytest.param("app!=web", False, id="not-equals-same-value"),
        pytest.param("app", True, id="exists"),
        pytest.param("missing", False, id="exists-absent"),
        pytest.param("!missing", True, id="does-not-exist"),
        pytest.param("!app", False, id="does-not-exist-present"),
        pytest.param("tier in (frontend, backend)", True, id="in"),
        pytest.param("tier in (backend)", False, id="in-other"),
        pytest.param("missing in (a)", False, id="in-absent"),
        pytest.param("tier notin (backend)", True, id="notin"),
        pytest.param("tier notin (frontend,backend)", False, id="notin-listed"),
        pytest.param("missing notin (a)", True, id="notin-matches-absent-label"),
        pytest.param("version>2", True, id="greater-than"),
        pytest.param("version<3", False, id="less-than"),
        pytest.param("app>2", False, id="greater-than-non-integer-label"),
        pytest.param("empty=", True, id="equals-empty-value"),
        pytest.param("app=", False, id="equals-empty-value-no-match"),
        pytest.param("app=web,tier=frontend,!canary", True, id="conjunction"),
        pytest.param("app=web,tier=backend", False, id="conjunction-one-fails"),
        pytest.param("  app = web ,  tier  in(frontend)  ", True, id="whitespace"),
        pytest.param("example.com/team=a", False, id="prefixed-key"),
    ],
)
def test_selectors_match_like_the_api_server(text: str, matches: bool) -> None:
    assert cache.parse_selector(text).matches(LABELS) is matches


def test_an_object_without_labels_matches_only_absence_requirements() -> None:
    obj = {"metadata": {"name": "x"}}
    assert cache.parse_selector("!app,app notin (a),app!=b").matches_object(obj)
    assert not cache.parse_selector("app").matches_object(obj)
    assert cache.parse_selector("").matches(None)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("b=2,a=1", "a=1,b=2", id="order"),
        pytest.param("x in (c,a,b)", "x in (a,b,c)", id="set-order"),
        pytest.param("app==web", "app=web", id="double-equals"),
        pytest.param("a=1,a=1", "a=1", id="duplicates"),
    ],
)
def test_equivalent_spellings_have_one_canonical_form(a: str, b: str) -> None:
    assert str(cache.parse_selector(a)) == str(cache.parse_selector(b))
    assert cache.parse_selector(a) == cache.parse_selector(b)


def test_the_canonical_form_parses_back_to_the_same_selector() -> None:
    text = "app=web,!canary,tier in (a,b),v>1,w<9,x!=y,y notin (z),zz"
    selector = cache.parse_selector(text)
    assert str(selector) == text
    assert cache.parse_selector(str(selector)) == selector


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("app in ()", id="empty-set"),
        pytest.param("app in (a", id="unclosed"),
        pytest.param("app in a", id="no-parens"),
        pytest.param("app=a b", id="two-values"),
        pytest.param("=a", id="no-key"),
        pytest.param("app>x", id="non-integer-bound"),
        pytest.param("-app=a", id="key-starts-with-dash"),
        pytest.param("app=" + "v" * 64, id="value-too-long"),
        pytest.param("Example.com/app=a", id="prefix-not-lowercase"),
        pytest.param("a=b,", id="trailing-comma"),
        pytest.param("app=(x)", id="parenthesis-as-value"),
    ],
)
def test_invalid_selectors_are_rejected_with_the_offending_text(text: str) -> None:
    with pytest.raises(cache.SelectorError, match="invalid"):
        cache.parse_selector(text)


def test_metav1_label_selectors_convert() -> None:
    selector = cache.selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["frontend", "backend"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "version", "operator": "Exists"},
                {"key": "zone", "operator": "NotIn", "values": ["a"]},
            ],
        }
    )
    assert str(selector) == "app=web,!canary,tier in (backend,frontend),version,zone notin (a)"
    assert selector.matches(LABELS)
    assert not selector.matches({**LABELS, "canary": "1"})
    assert cache.selector_from_dict({}).matches({})


def test_an_unknown_expression_operator_names_the_valid_ones() -> None:
    with pytest.raises(cache.SelectorError, match="In, NotIn, Exists, DoesNotExist"):
        cache.selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


KEYS = st.sampled_from(["app", "tier", "example.com/team"])
VALUES = st.sampled_from(["a", "b", "c"])
REQUIREMENTS: st.SearchStrategy[tuple[str, str, list[str]]] = st.one_of(
    st.tuples(st.sampled_from(["=", "!="]), KEYS, st.lists(VALUES, min_size=1, max_size=1)),
    st.tuples(st.sampled_from(["in", "notin"]), KEYS, st.lists(VALUES, min_size=1, max_size=3, unique=True)),
    st.tuples(st.sampled_from(["exists", "!exists"]), KEYS, st.just([])),
)


def spelled(operator: str, key: str, values: list[str]) -> str:
    if operator in ("=", "!="):
        return f"{key}{operator}{values[0]}"
    if operator in ("in", "notin"):
        return f"{key} {operator} ({','.join(values)})"
    return key if operator == "exists" else f"!{key}"


def holds(operator: str, key: str, values: list[str], labels: dict[str, str]) -> bool:
    """The API server's meaning of one requirement, written out plainly."""
    present = key in labels
    if operator in ("=", "in"):
        return present and labels[key] in values
    if operator in ("!=", "notin"):
        return not present or labels[key] not in values
    return present if operator == "exists" else not present


@settings(max_examples=300, deadline=None)
@given(
    st.lists(REQUIREMENTS, max_size=4),
    st.dictionaries(KEYS, VALUES, max_size=3),
)
def test_a_selector_matches_exactly_when_every_requirement_holds(
    requirements: list[tuple[str, str, list[str]]], labels: dict[str, str]
) -> None:
    text = ",".join(spelled(*requirement) for requirement in requirements)
    selector = cache.parse_selector(text)
    expected = all(holds(*requirement, labels) for requirement in requirements)
    assert selector.matches(labels) is expected
    assert selector.matches_object({"metadata": {"labels": labels}}) is expected
    assert cache.parse_selector(str(selector)).matches(labels) is expected, (
        "the canonical form means the same"
    )
