"""The documentation site: built with warnings as errors, its internal links resolved, and three
of its pages rendered by a real browser (headless Chromium, network off) with their titles and
figures; its maths rendered by the bundled MathJax, and its code blocks without sideways scrolling.

The build executes the example gallery and validates every public docstring (numpydoc: its
Parameters, Returns and Examples), so a stale example or an undocumented public name fails here.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


# The gallery's deep-network example trains a PyTorch network: the build needs the `deep` extra,
# which CI installs (a test marked torch fails there without it; tests/conftest.py).
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once for this module by docs/guide/getting_started.md's command, into a
    scratch folder."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(out / "doctrees"),
            str(ROOT / "docs"),
            str(out / "html"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert run.returncode == 0, f"sphinx-build failed:\n{run.stderr[-6000:]}"
    return out / "html"


class _Links(html.parser.HTMLParser):
    """Every href / src of a page, and its ids (the targets of #fragments)."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


@pytest.mark.slow  # builds the site with Sphinx
def test_every_internal_link_of_the_site_resolves(site):
    # the site's pages; _static holds the theme's own template fragments, not pages
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    assert len(pages) > 50  # the guide, the gallery and one page per public name
    parsed = {page: _parse(page) for page in pages}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue  # external: not checked offline
            target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link}")
            elif url.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if url.fragment not in ids:
                    broken.append(f"{page.relative_to(site)} -> {link} (no id {url.fragment!r})")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:40])


@pytest.mark.slow  # builds the site with Sphinx
def test_every_public_name_has_a_page(site):
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from conf import API_MODULES  # the reference's module list, read from the site's config
    finally:
        sys.path.remove(str(ROOT / "docs"))
    import importlib

    missing = []
    for name in API_MODULES:
        module = importlib.import_module(name)
        page = (site / "api" / f"{name}.html").read_text(encoding="utf-8")
        missing += [f"{name}.{member}" for member in module.__all__ if member not in page]
    assert not missing, f"public names without an entry in the API reference: {missing}"


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "CI=true but Debian's chromium / chromium-driver are missing (.ci/run installs them)"
            )
        pytest.skip(
            "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="the docs extra: pip install -e '.[docs]'"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # The network off: no host name resolves and any proxied request goes to a dead port, so every
    # page, its figures and its maths must come from the built site (the README's offline promise).
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,1600",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--proxy-server=http://127.0.0.1:9",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def _render(browser, page: Path, screenshot: Path):
    browser.get(page.as_uri())
    title = browser.title
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('article img')).map("
        "i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0, i.naturalWidth]);"
    )
    heading = browser.execute_script(
        "const h = document.querySelector('article h1'); return h ? h.innerText : null;"
    )
    browser.save_screenshot(str(screenshot))
    return title, heading, images


@pytest.mark.slow  # builds the site and drives Chromium
@pytest.mark.parametrize(
    "page, heading, figure",
    [
        ("index.html", "rejectopt", "sphx_glr_plot_sele_rc_curve_001.png"),
        ("api/generated/rejectopt.metrics.aurc.html", "aurc", None),
        (
            "auto_examples/plot_sele_rc_curve.html",
            "SELE on a scikit-learn classifier",
            "sphx_glr_plot_sele_rc_curve_001.png",
        ),
    ],
)
def test_pages_render_in_a_browser_with_their_title_and_figure(
    site, browser, page, heading, figure, tmp_path
):
    shot = Path(os.environ.get("REJECTOPT_DOCS_SCREENSHOTS", tmp_path)) / (
        page.replace("/", "_") + ".png"
    )
    shot.parent.mkdir(parents=True, exist_ok=True)
    title, h1, images = _render(browser, site / page, shot)
    assert heading in title and h1 is not None and heading in h1, (title, h1)
    assert all(loaded for _, loaded, _ in images), f"images that did not load: {images}"
    if figure is not None:
        assert any(
            src.endswith(figure) and loaded and width > 100 for src, loaded, width in images
        ), images
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on 127.0.0.1 (as a web host serves it; fonts load as they would there)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.slow  # builds the site and drives Chromium
def test_maths_renders_offline_from_the_bundled_mathjax(site, served, browser):
    """The Metrics page loads MathJax from the site itself, not a CDN, and with the network off its
    maths becomes MathJax's rendered elements, drawn in MathJax's own fonts (loaded from the site):
    no raw ``\\(`` is left in the text, and a page outside the site does not load."""
    from selenium.webdriver.support.ui import WebDriverWait

    source = (site / "guide/metrics.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-chtml.js" in source and "cdn.jsdelivr.net" not in source
    assert (site / "_static/mathjax/tex-chtml.js").is_file()
    browser.get(f"{served}/guide/metrics.html")
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return window.MathJax && MathJax.startup && MathJax.startup.promise && "
            "document.querySelectorAll('mjx-container').length > 0"
        )
    )
    browser.execute_async_script("MathJax.startup.promise.then(arguments[arguments.length - 1]);")
    rendered = browser.execute_script(
        "const m = Array.from(document.querySelectorAll('article mjx-container'));"
        "return [m.length, m.filter(e => e.getBoundingClientRect().width > 0 && e.querySelector('mjx-c')).length,"
        " document.querySelector('article').innerText.includes('\\\\('),"
        " Array.from(document.fonts).some(f => f.family.includes('MJXTEX') && f.status === 'loaded')];"
    )
    total, drawn, raw_left, fonts = rendered
    assert total >= 10 and drawn == total and fonts, rendered
    assert not raw_left
    from selenium.common.exceptions import WebDriverException

    with pytest.raises(WebDriverException, match="ERR_(NAME_NOT_RESOLVED|PROXY_CONNECTION_FAILED)"):
        browser.get("https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js")  # the network is off


@pytest.mark.slow  # builds the site and drives Chromium
def test_getting_started_code_blocks_need_no_sideways_scrolling(site, browser):
    browser.get((site / "guide/getting_started.html").as_uri())
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('article div.highlight pre')).map("
        "p => [p.scrollWidth, p.clientWidth, p.innerText.split('\\n').reduce((a, l) => Math.max(a, l.length), 0)]);"
    )
    assert len(widths) >= 3
    assert (
        max(line for _, _, line in widths) > 100
    )  # a command longer than the column, which now wraps
    assert all(scroll <= client + 1 for scroll, client, _ in widths), widths
