"""Name-aware and image-grid grouping of columns into sensors (ui.grouping)."""

from __future__ import annotations

import pytest

from ui.grouping import group_by_name, image_grid, image_positions, propose, words

BREAST = [
    f"{kind} {what}" if kind != "error" else f"{what} error"
    for kind in ("mean", "error", "worst")
    for what in ("radius", "texture", "concave points", "fractal dimension")
]


def test_words_split_at_any_punctuation_or_a_given_separator():
    assert words("worst fractal_dimension") == ["worst", "fractal", "dimension"]
    assert words("a-b.c", "-") == ["a", "b.c"]
    assert words("__") == []


def test_shared_word_finds_mean_error_worst():
    grouping = group_by_name(BREAST, "word")
    assert list(grouping.groups) == ["mean", "error", "worst"]
    assert grouping.groups["error"] == [
        "radius error",
        "texture error",
        "concave points error",
        "fractal dimension error",
    ]
    assert grouping.leftover == []
    spec = grouping.to_spec(cost=2.5)
    assert spec.costs == {"mean": 2.5, "error": 2.5, "worst": 2.5}


def test_shared_word_is_case_insensitive_and_leaves_unshared_columns_alone():
    grouping = group_by_name(["Lab_glucose", "lab_insulin", "age", "bmi"])
    assert grouping.groups == {
        "Lab": ["Lab_glucose", "lab_insulin"],
        "age": ["age"],
        "bmi": ["bmi"],
    }
    assert grouping.leftover == ["age", "bmi"]


def test_prefix_and_suffix():
    assert list(group_by_name(BREAST, "prefix").groups)[:2] == ["mean", "radius"]
    suffix = group_by_name(BREAST, "suffix").groups
    assert suffix["radius"] == ["mean radius", "worst radius"]
    assert len(suffix["error"]) == 4
    assert group_by_name(["a.x", "a.y", "b"], "prefix", separator=".").groups == {
        "a": ["a.x", "a.y"],
        "b": ["b"],
    }


def test_pattern_uses_the_first_group_or_the_match():
    by_group = group_by_name(BREAST, "pattern", pattern=r"^(\w+) ")
    assert list(by_group.groups)[:2] == ["mean", "radius"]
    by_match = group_by_name(BREAST, "pattern", pattern="mean|error|worst")
    assert [len(c) for c in by_match.groups.values()] == [4, 4, 4]
    partial = group_by_name(
        ["band1_x", "band1_y", "band2_x", "id"], "pattern", pattern=r"band\d"
    )
    assert partial.groups == {
        "band1": ["band1_x", "band1_y"],
        "band2": ["band2_x"],
        "id": ["id"],
    }
    assert partial.leftover == ["id"]


def test_a_leftover_column_never_takes_a_group_name():
    grouping = group_by_name(["a", "xa_1", "xa_2"], "pattern", pattern="a(?=_)")
    assert grouping.groups == {"a (2)": ["a"], "a": ["xa_1", "xa_2"]}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "pattern", "pattern": ""}, "Type a pattern"),
        ({"mode": "pattern", "pattern": "(a|"}, "'\\(a\\|' is not a valid regular"),
        ({"mode": "letters"}, "Unknown grouping mode 'letters'"),
    ],
)
def test_bad_grouping_requests_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        group_by_name(["a", "b"], **kwargs)
    with pytest.raises(ValueError, match="no columns"):
        group_by_name([], "word")


def test_two_index_image_into_quadrants_and_blocks():
    cols = ["id"] + [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    quadrants = image_grid(cols, 2)
    assert list(quadrants.groups) == [
        "top-left",
        "top-right",
        "bottom-left",
        "bottom-right",
        "id",
    ]
    assert quadrants.groups["bottom-right"][0] == "pixel_4_4"
    assert all(len(quadrants.groups[q]) == 16 for q in list(quadrants.groups)[:4])
    assert quadrants.leftover == ["id"]
    nine = image_grid(cols[1:], 3)
    assert [len(v) for v in nine.groups.values()] == [9, 9, 6, 9, 9, 6, 6, 6, 4]
    # Named from 0, like the columns' pixel_0_0.
    assert list(nine.groups)[0] == "r0c0" and list(nine.groups)[-1] == "r2c2"


def test_one_index_and_plain_square_images():
    grid, rest = image_positions([f"px{k}" for k in range(1, 17)])
    assert grid.shape == (4, 4) and grid[1, 0] == "px5" and rest == []
    grid, rest = image_positions(list("abcdefghi"))
    assert grid.tolist() == [list("abc"), list("def"), list("ghi")]


def test_columns_that_form_no_image_or_too_many_blocks_are_refused():
    with pytest.raises(ValueError, match="The 5 columns do not form an image"):
        image_grid(list("abcde"))
    with pytest.raises(ValueError, match="between 1 and 3 for a 3 x 3 image; got 4"):
        image_grid(list("abcdefghi"), 4)
    with pytest.raises(TypeError, match="blocks must be an integer"):
        image_grid(list("abcd"), 1.5)


def test_propose_dispatches_and_is_deterministic():
    cols = [f"pixel_{k}" for k in range(16)]
    assert propose(cols, "grid", blocks=2).groups == image_grid(cols, 2).groups
    assert propose(BREAST, "word").groups == propose(BREAST, "word").groups


# ------------------------------------------------------- the suggestion
def test_the_suggestion_is_the_detected_name_grouping():
    from ui.grouping import describe_grouping, suggest_spec

    columns = BREAST  # mean / error / worst x 4 features: the kinds share most
    found = suggest_spec(columns)
    assert sorted(found.spec.names) == ["error", "mean", "worst"]
    assert "mean" in found.how and "error" in found.how
    assert describe_grouping(found.spec, columns) == found.how


def test_the_suggestion_is_an_image_grid_when_columns_name_pixels():
    from ui.grouping import describe_grouping, suggest_spec

    pixels = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    found = suggest_spec(pixels)  # 64 cells: one sensor per pixel, 0-based
    assert found.spec.n_sensors == 64 and found.spec.groups["r0c0"] == ["pixel_0_0"]
    assert found.how == "one sensor per pixel of the 8 x 8 image"
    big = [f"px{i}" for i in range(256)]  # 16 x 16, numbered: blocks
    found = suggest_spec(big)
    assert found.spec.n_sensors == 64 and found.how.endswith("8 x 8 blocks")
    assert describe_grouping(found.spec, big) == found.how
    # A square number of plain columns is no image.
    plain = [f"x{i}" for i in range(16)]
    assert suggest_spec(plain).how == "one sensor per column"


def test_otherwise_one_sensor_per_column_never_blocks():
    from ui.grouping import describe_grouping, suggest_spec

    # Wine's names share words by chance (ash, phenols): not a grouping.
    wine = [
        "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
        "total_phenols", "flavanoids", "nonflavanoid_phenols",
        "proanthocyanins", "color_intensity", "hue",
        "od280/od315_of_diluted_wines", "proline",
    ]  # fmt: skip
    found = suggest_spec(wine)
    assert found.spec.groups == {c: [c] for c in wine}
    assert describe_grouping(found.spec, wine) == "one sensor per column"
    many = [f"x{i}" for i in range(100)]  # beyond 64: still per column
    assert suggest_spec(many).spec.n_sensors == 100
    # Indices are no shared words: f_1 .. f_20 is no group of "f".
    assert suggest_spec([f"f_{i}" for i in range(20)]).spec.n_sensors == 20
    # One-hot columns stay one sensor, named by the column they came from.
    together = suggest_spec(["age", "c_r", "c_g"], together={"c": ["c_r", "c_g"]})
    assert together.spec.groups == {"age": ["age"], "c": ["c_r", "c_g"]}
    assert describe_grouping(together.spec, ["age", "c_r", "c_g"]) is None
