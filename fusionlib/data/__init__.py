"""Datasets: registry, hash-verified provisioning and typed loaders."""

from fusionlib.data.loaders import ADULT_COLUMNS, GERMAN_COLUMNS, IMAGES, TABULAR, load, load_images
from fusionlib.data.provisioning import provision, provision_all
from fusionlib.data.registry import REGISTRY, DatasetSpec, FileSpec, get_spec
from fusionlib.data.store import data_dir, dataset_paths, file_digest, verify_file

__all__ = [
    "ADULT_COLUMNS", "GERMAN_COLUMNS", "IMAGES", "TABULAR", "REGISTRY", "DatasetSpec", "FileSpec",
    "data_dir", "dataset_paths", "file_digest", "get_spec", "load", "load_images", "provision",
    "provision_all", "verify_file",
]
