"""Data: the pinned public files (registry, verified fetch) and tidy loaders."""

from __future__ import annotations

from hca.data import frames, loaders, registry, tables
from hca.data.frames import domain_data  # noqa: F401
from hca.data.loaders import (  # noqa: F401
    load_leaderboard_v1,
    load_leaderboard_v2,
    load_leaderboard_v2_final_html,
    load_lifearchitect,
    load_mmlu_by_task,
    load_obsscaling_base_models,
    load_sloth_base_models,
)
from hca.data.registry import (  # noqa: F401
    BENCHMARK_LABELS,
    MMLU_SUBJECTS,
    REGISTRY,
    V1_BENCHMARKS,
    V2_BENCHMARKS,
    DataDownloadError,
    DataFile,
    DataIntegrityError,
    alignment_text,
    benchmark_label,
    fetch,
    fetch_file,
    provenance_table,
    role_position,
    sha256sum,
)
from hca.data.tables import (  # noqa: F401
    BASE_MODEL_COLUMNS,
    FIGURE8_CHECKPOINTS,
    FIGURE8_COLUMNS,
    TABLES,
    authors_code_values,
    authors_edge_weights,
    authors_tokens,
    base_models_table,
    load_paper_values,
    paper_figure8_sft,
    parse_tolerance,
    pretraining_tokens,
    table_path,
)

__all__ = [*frames.__all__, *loaders.__all__, *registry.__all__, *tables.__all__]
