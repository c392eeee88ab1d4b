"""The data sets the tasks read: what files each one is, where it comes from, how it is checked.

A declarative table, read by the loaders (mnist.py, cifar10.py, text.py, imagenet32.py),
by tasks/datasets/catalog.py (where each one is found, fetching one by name) and by
`search data`. Nothing here touches the disk or the network.

Every data set is looked for as tasks/datasets/fetch.py describes: in `--data-dir`, then
$SEARCH_DATA_DIR, then the cache (~/.cache/shape-search, or $XDG_CACHE_HOME/shape-search),
each directory itself or its `folder`/. A downloadable one found nowhere is downloaded into
the cache's `folder`/ on first use, checked against its SHA-256 (a temporary file, then a
rename). The checksums were taken from independent public listings (see each entry).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Remote:
    """One downloadable file."""

    name: str  # saved under this name in the data set's folder
    urls: tuple[str, ...]  # mirrors, tried in order
    sha256: str
    size: int | None = None  # bytes of the download, when known
    checks: str = "file"  # "file": sha256 is of the downloaded bytes; "content": of its gunzipped bytes


@dataclass(frozen=True)
class DataSet:
    """One data set: the files a loader needs and how to get them."""

    name: str  # `search data fetch NAME`
    title: str  # short, for messages
    folder: str  # the sub-folder of a data directory that holds it (the cache's download folder)
    files: tuple[str, ...] = ()  # what must be present (each .gz or raw where the loader reads both)
    optional: tuple[str, ...] = ()  # read when present (counted in its size)
    downloads: tuple[Remote, ...] = ()  # empty: never downloaded
    download_bytes: int | None = None  # what a download transfers in all (about)
    unpacked_bytes: int | None = None  # what it takes on disk once fetched (about)
    manual: str = ""  # how to get it by hand, when it is not downloaded
    bundled: str = ""  # a data set with no files of its own, e.g. "bundled with scikit-learn"

    @property
    def downloadable(self) -> bool:
        return bool(self.downloads)


MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
# SHA-256 of the uncompressed IDX files (the mirrors' gzip bytes may differ between copies).
MNIST_SHA256 = dict(
    zip(
        MNIST_FILES,
        (
            "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
            "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
            "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
            "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
        ),
    )
)

CIFAR10_ARCHIVE = "cifar-10-python.tar.gz"
CIFAR10_FOLDER = "cifar-10-batches-py"  # also the folder inside the archive
CIFAR10_FILES = (*(f"data_batch_{i}" for i in range(1, 6)), "test_batch")
# The "CIFAR-10 python version" archive of its authors' page (cs.toronto.edu/~kriz/cifar.html).
# SHA-256 as Keras' cifar10.load_data checks it (keras/datasets/cifar10.py, file_hash);
# 170,498,071 bytes (md5 c58f30108f718f92721af3b95e74349a, the one the page gives).
CIFAR10_REMOTE = Remote(
    CIFAR10_ARCHIVE,
    ("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",),
    "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
    170_498_071,
)

# Two Shakespeare corpora. "shakespeare": the 42 plays and poems of Project Gutenberg
# concatenated (5,057,198 bytes, kept in ../shared/data; it has no download address), read
# when found. "tiny-shakespeare": the 1,115,394-byte extract of char-rnn and nanoGPT, the one
# downloaded when the first is found nowhere. SHA-256 of both: of the uncompressed text.
SHAKESPEARE_FILE = "shakespeare.txt"
SHAKESPEARE_SHA256 = "da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387"  # measured on ../shared
TINY_SHAKESPEARE_FILE = "tiny-shakespeare.txt"
# SHA-256 and size as tensorflow-datasets lists them (url_checksums/tiny_shakespeare.txt).
TINY_SHAKESPEARE_REMOTE = Remote(
    TINY_SHAKESPEARE_FILE,
    ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",),
    "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    1_115_394,
)

IMAGENET32_TRAIN = tuple(f"train_data_batch_{i}.npz" for i in range(1, 11))
IMAGENET32_TEST = "val_data.npz"
IMAGENET32_URL = "https://image-net.org/download-images.php"

DATASETS: dict[str, DataSet] = {
    d.name: d
    for d in (
        DataSet(
            "mnist",
            "MNIST",
            "mnist",
            MNIST_FILES,
            downloads=tuple(
                Remote(f"{n}.gz", tuple(m + f"{n}.gz" for m in MNIST_MIRRORS), MNIST_SHA256[n], checks="content")
                for n in MNIST_FILES
            ),
            download_bytes=11_594_722,
            unpacked_bytes=11_594_722,
        ),
        DataSet(
            "cifar10",
            "CIFAR-10",
            CIFAR10_FOLDER,
            CIFAR10_FILES,
            optional=("batches.meta",),
            downloads=(CIFAR10_REMOTE,),
            download_bytes=170_498_071,
            unpacked_bytes=186_210_000,
        ),
        DataSet(
            "tiny-shakespeare",
            "Tiny Shakespeare (char-rnn)",
            "tiny-shakespeare",
            (TINY_SHAKESPEARE_FILE,),
            downloads=(TINY_SHAKESPEARE_REMOTE,),
            download_bytes=1_115_394,
            unpacked_bytes=1_115_394,
        ),
        DataSet(
            "shakespeare",
            "Shakespeare (Gutenberg, 42 works)",
            "shakespeare",
            (SHAKESPEARE_FILE,),
            unpacked_bytes=5_057_198,
            manual=(
                f"no download address: put your copy as {SHAKESPEARE_FILE}.gz (or {SHAKESPEARE_FILE}); "
                "without it lm-shakespeare uses tiny-shakespeare"
            ),
        ),
        DataSet(
            "imagenet32",
            "ImageNet-32",
            "imagenet32",
            (IMAGENET32_TRAIN[0], IMAGENET32_TEST),
            optional=IMAGENET32_TRAIN[1:],
            unpacked_bytes=4_090_000_000,
            manual=(
                f"needs an ImageNet account: log in at {IMAGENET32_URL}, download Imagenet32_train_npz.zip and "
                f"Imagenet32_val_npz.zip (Downsampled ImageNet 32x32) and unzip them, giving "
                f"{IMAGENET32_TRAIN[0]} .. {IMAGENET32_TRAIN[-1]} and {IMAGENET32_TEST}"
            ),
        ),
        DataSet("digits", "digits (8x8)", "digits", bundled="bundled with scikit-learn"),
    )
}


def get(name: str) -> DataSet:
    """The data set `name`; KeyError when there is none (callers phrase the error)."""
    return DATASETS[name]
