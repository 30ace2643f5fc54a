"""The kernel table's row grouping is np.unique(axis=0), only faster: same rows, same order, same inverse."""

import numpy as np

from tb_gpu_advisor.analysis.kernels import _unique_rows


def test_same_as_numpy_unique_rows():
    rng = np.random.default_rng(7)
    keys = np.stack([rng.integers(0, 50, 5000), rng.integers(0, 30, 5000), rng.integers(-1, 20, 5000)], axis=1).astype(
        np.int32
    )
    expected, inverse = np.unique(keys, axis=0, return_inverse=True)
    rows, got_inverse = _unique_rows(keys)
    assert rows.dtype == expected.dtype and np.array_equal(rows, expected)
    assert np.array_equal(got_inverse, inverse.reshape(-1))


def test_huge_ids_take_the_row_wise_path():
    keys = np.array([[2**30, 2**30, 5], [1, 2**30, -1], [2**30, 2**30, 5]], dtype=np.int64)
    rows, inverse = _unique_rows(keys)
    assert rows.tolist() == [[1, 2**30, -1], [2**30, 2**30, 5]] and inverse.tolist() == [1, 0, 1]
