"""Dataset loading for the envs: JSONL, Parquet and the Hugging Face hub."""

from rlenvs.data.loading import (
    DATA_DIR_VARIABLE,
    DataFiles,
    DataFormatError,
    DataNotFoundError,
    DataSpec,
    HubDataset,
    RowLocation,
    load_tasks,
    read_rows,
)

__all__ = [
    "DATA_DIR_VARIABLE",
    "DataFiles",
    "DataFormatError",
    "DataNotFoundError",
    "DataSpec",
    "HubDataset",
    "RowLocation",
    "load_tasks",
    "read_rows",
]
