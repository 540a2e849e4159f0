"""What the workflow's scripts need from the library's inner modules, named once.

The scripts are shells over :mod:`rejectopt.pipeline` and the public library: they import no
module whose name starts with an underscore. The file helpers, the download and archive steps and
the experiment contract below live in the library's private modules, where their callers are;
this module is the one door the scripts use, so that moving one of them changes one line here.
"""

from .._io import npz_checksum, save_csv, write_csv, write_text
from ..classifiers._training import CAP_MESSAGE
from ..datasets._custom import custom_checksums, prepare_custom
from ..datasets._download import DownloadOptions
from ..datasets._faces300w import MIRROR_SUBSETS, extract_official_archive, fetch_archive
from ..datasets._fetch import fetch_file
from ..datasets._prepare import dataset_checksums
from ..landmarks._detect import load_or_detect_faces
from .experiments._contract import aggregate_files, load_experiments, run_dataset
from .experiments._rules import run_rule
from .report._figures import save_figure
