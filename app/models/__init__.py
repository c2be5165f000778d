"""Model catalog, resolution and downloads (see models/README.md)."""

from app.models.catalog import Catalog, ModelEntry, ModelFile, Role, load_catalog
from app.models.download import download
from app.models.errors import DownloadCancelled, ModelError
from app.models.resolve import ResolvedModel, resolve
from app.models.verify import FileCheck, verify

__all__ = [
    "Catalog",
    "DownloadCancelled",
    "FileCheck",
    "ModelEntry",
    "ModelError",
    "ModelFile",
    "ResolvedModel",
    "Role",
    "download",
    "load_catalog",
    "resolve",
    "verify",
]
