"""Input pipeline findings: the GPU waits for input, and the tf.data stages that make it wait."""

from __future__ import annotations

from tb_gpu_advisor.findings.rules.input.waits import gpu_waits_for_input, main_process_loader, no_prefetch
from tb_gpu_advisor.findings.rules.input.pipeline import (
    demanded_file_reads,
    map_pool_saturated,
    no_cache,
    python_generator,
    sequential_map,
    tf_data_service,
)
from tb_gpu_advisor.findings.rules.input.batch_prep import host_batch_prep
from tb_gpu_advisor.findings.rules.input.entries import ENTRIES as ENTRIES


RULES = (
    gpu_waits_for_input,
    main_process_loader,
    host_batch_prep,
    no_prefetch,
    sequential_map,
    map_pool_saturated,
    python_generator,
    demanded_file_reads,
    no_cache,
    tf_data_service,
)
