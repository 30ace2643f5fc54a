"""unique_ids / unique_rows give np.unique's (unique, first, inverse) exactly, table or fallback."""

import numpy as np
import pytest

from tb_gpu_advisor.readers.xplane.unique_ids import unique_ids, unique_rows


def _same(got, expected):
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype
        assert np.array_equal(a, b.reshape(a.shape))
        assert a.shape == b.shape or a.ndim == 1


@pytest.mark.parametrize(
    "values",
    [
        np.array([5, 3, 5, -1, 3, 7, -1], np.int64),
        np.array([2**63 - 1, 2**63 - 2, 2**63 - 1], np.int64),  # near the int64 limit
        np.array([-(2**63), -(2**63) + 1], np.int64),
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], np.uint64),
        np.array([0, 10**12, 0], np.int64),  # a wide range: np.unique's sort
        np.array([], np.int64),
        np.array([4], np.int32),
    ],
)
def test_unique_ids_matches_np_unique(values):
    _same(unique_ids(values), np.unique(values, return_index=True, return_inverse=True))


def test_unique_ids_on_random_chunks():
    rng = np.random.default_rng(1)
    for span in (1, 7, 300, 50_000, 10**9):
        values = rng.integers(-3, span, 5_000).astype(np.int64)
        _same(unique_ids(values), np.unique(values, return_index=True, return_inverse=True))


@pytest.mark.parametrize("span", [1, 3, 40, 10**6, 2**62])
def test_unique_rows_matches_np_unique(span):
    rng = np.random.default_rng(span % 1000)
    keys = np.stack([rng.integers(-1, 4, 3_000), rng.integers(-1, span, 3_000), rng.integers(0, 3, 3_000)], axis=1)
    _same(unique_rows(keys.astype(np.int64)), np.unique(keys, axis=0, return_index=True, return_inverse=True))


def test_unique_rows_of_nothing():
    keys = np.zeros((0, 2), np.int64)
    _same(unique_rows(keys), np.unique(keys, axis=0, return_index=True, return_inverse=True))
