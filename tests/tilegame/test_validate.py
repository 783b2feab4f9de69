"""``mtrain_env.tilegame.validate.as_int``: the one "an int, not a bool, in range" check.

Its plain form is the configs' (``TypeError`` for a wrong type, numpy ints accepted); with
bounds, ``numpy=False`` and ``error=ValueError`` it is the agents' knobs' form, whose
messages the knob tests match (``"depth must be an int >= 0, got True"``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mtrain_env.tilegame.validate import as_int


@pytest.mark.parametrize(("value", "expected"), [(3, 3), (np.int64(3), 3), (np.array(-2), -2), (0, 0)])
def test_plain_as_int_accepts_what_operator_index_takes(value: Any, expected: int) -> None:
    got = as_int("n", value)
    assert got == expected and type(got) is int


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "n must be an int, got bool True"),
        (2.0, "n must be an int, got float 2.0"),
        ("2", "n must be an int, got str '2'"),
    ],
)
def test_plain_as_int_refuses_other_types_with_a_type_error(value: Any, message: str) -> None:
    with pytest.raises(TypeError) as err:
        as_int("n", value)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("low", "high", "value", "message"),
    [
        (0, None, -1, "n must be an int >= 0, got -1"),
        (1, 4096, 0, "n must be an int in 1..4096, got 0"),
        (1, 4096, 4097, "n must be an int in 1..4096, got 4097"),
        (None, 5, 6, "n must be an int <= 5, got 6"),
        (0, None, np.int64(-1), "n must be an int >= 0, got {!r}"),
    ],
)
def test_out_of_range_is_a_value_error_naming_the_range(
    low: int | None, high: int | None, value: Any, message: str
) -> None:
    with pytest.raises(ValueError) as err:
        as_int("n", value, low=low, high=high)
    assert str(err.value) == message.format(value)  # numpy >= 2 prints np.int64(-1)
    assert as_int("n", 1 if low is None else low, low=low, high=high) == (1 if low is None else low)
    if high is not None:
        assert as_int("n", high, low=low, high=high) == high


def test_numpy_false_takes_python_ints_only() -> None:
    assert as_int("n", 7, low=0, numpy=False) == 7
    with pytest.raises(TypeError, match=r"^n must be an int, got int64 "):
        as_int("n", np.int64(7), low=0, numpy=False)


@pytest.mark.parametrize("value", [True, False, 1.0, None, np.int64(3), -1])
def test_error_class_gives_the_knobs_one_message_for_type_and_range(value: Any) -> None:
    with pytest.raises(ValueError) as err:
        as_int("depth", value, low=0, numpy=False, error=ValueError)
    assert str(err.value) == f"depth must be an int >= 0, got {value!r}"
    assert not isinstance(err.value, TypeError)
