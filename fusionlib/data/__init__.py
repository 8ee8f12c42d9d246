"""Datasets: registry, hash-verified provisioning and typed loaders."""

from fusionlib.data.loaders import ADULT_COLUMNS, GERMAN_COLUMNS, IMAGES, TABULAR, load, load_images
from fusionlib.data.provisioning import provision, provision_all
from fusionlib.data.registry import (
    HASH_POLICIES,
    LOCK_FILE,
    RECORD_ON_FIRST_USE,
    REGISTRY,
    STRICT,
    DatasetSpec,
    FileSpec,
    get_spec,
)
from fusionlib.data.store import (
    data_dir,
    dataset_paths,
    dataset_states,
    file_digest,
    file_state,
    read_lock,
    verify_file,
)

__all__ = [
    "ADULT_COLUMNS", "GERMAN_COLUMNS", "IMAGES", "TABULAR", "REGISTRY", "DatasetSpec", "FileSpec",
    "HASH_POLICIES", "LOCK_FILE", "RECORD_ON_FIRST_USE", "STRICT",
    "data_dir", "dataset_paths", "dataset_states", "file_digest", "file_state", "get_spec", "load",
    "load_images", "provision", "provision_all", "read_lock", "verify_file",
]
