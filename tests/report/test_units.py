"""Numbers with units: one unit per header and table."""

from tb_gpu_advisor.report.units import durations_ms, parse_duration_ms


def test_durations_share_the_unit_of_the_largest():
    # tf_eager_function once read "stdev 0.70 ms on a 0.97 ms median" under a header of "697.4 µs" / "972.1 µs".
    assert durations_ms(1.67, 1.59, 0.4137) == ("1.67 ms", "1.59 ms", "0.41 ms")
    assert durations_ms(0.9721, 0.6974) == ("972.1 µs", "697.4 µs")
    assert durations_ms(1500.0, 20.0) == ("1.50 s", "0.02 s")
    assert durations_ms(14.89, 0.0008, None, 0.0) == ("14.89 ms", "0.001 ms", "-", "0.00 ms")


def test_parsed_durations_round_trip():
    assert parse_duration_ms("71.3 µs") == 0.0713
    assert parse_duration_ms("14.89 ms") == 14.89
    assert parse_duration_ms("-") is None and parse_duration_ms("5") is None
