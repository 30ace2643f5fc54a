from tb_gpu_advisor.model.details import parse_copy_details, parse_kernel_details


def test_current_kernel_details():
    config = parse_kernel_details(
        "regs:128 static_shared:4096 dynamic_shared:49152 grid:132,2,1 block:384,1,1 occ_pct:18.75"
    )
    assert config.registers_per_thread == 128
    assert config.shared_memory_bytes == 53248
    assert config.grid == (132, 2, 1) and config.block == (384, 1, 1)
    assert config.occupancy_pct == 18.75
    assert config.threads_per_block == 384 and config.blocks == 264


def test_old_kernel_details_have_no_occupancy_and_shm_is_not_read():
    config = parse_kernel_details("regs:38 shm:0 grid:160,1,1 block:1024,1,1")
    assert config.occupancy_pct is None
    assert config.shared_memory_bytes == 0
    assert config.grid == (160, 1, 1)


def test_values_beyond_32_bits_keep_defaults_like_xprof():
    config = parse_kernel_details(
        "regs:17179869185 shm:7 grid:1,210453397508,0 block:139910371608800,96,18446744073709551536"
    )
    assert config.registers_per_thread == 0
    assert config.grid == (1, 1, 1) and config.block == (1, 1, 1)


def test_copy_details_both_formats():
    current = parse_copy_details("kind_src:pageable kind_dst:device size:1048576 dest:0 async:0")
    assert (current.size_bytes, current.has_pageable_side, current.is_async) == (1048576, True, False)
    pinned = parse_copy_details("kind_src:pinned kind_dst:device size:8 dest:0 async:1")
    assert (pinned.has_pageable_side, pinned.is_async) == (False, True)
    old = parse_copy_details("size:6144 dest:6 async:1")
    assert (old.size_bytes, old.has_pageable_side, old.is_async) == (6144, None, True)
