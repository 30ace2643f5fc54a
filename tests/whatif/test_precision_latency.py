"""whatif.precision: a converted kernel row never runs faster than its calls' per-call latency."""

from tb_gpu_advisor.whatif.precision import MatmulKernel, converted_ms


def test_a_row_of_short_calls_stops_at_their_latency():
    # 1 ms of fp32 math, 16x faster on the 16-bit peak: 62.5 µs; with calls that take at least 0.2 ms, 0.2 ms.
    fast = MatmulKernel(1.0, None, None)
    assert converted_ms(fast, 19.5, 312.0, 2000.0)[0] == 1.0 * 19.5 / 312.0
    short = MatmulKernel(1.0, None, None, min_ms=0.2)
    assert converted_ms(short, 19.5, 312.0, 2000.0)[0] == 0.2
    assert converted_ms(MatmulKernel(1.0, None, None, min_ms=2.0), 19.5, 312.0, 2000.0)[0] == 1.0  # never slower
