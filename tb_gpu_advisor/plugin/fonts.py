"""The Roboto faces TensorBoard serves for its own tabs, as a stylesheet the tab's iframe can load.

TensorBoard's assets (webfiles.zip) hold `font-roboto/roboto.html`: a <style> of @font-face rules with URLs
from TensorBoard's root (`/font-roboto/...woff2`). The tab's iframe is another document, so it declares the
faces itself; the URLs are made relative to this stylesheet (served at `<root>/data/plugin/<name>/fonts.css`),
which keeps them working under `--path_prefix`. Without the assets the sheet is empty and the fallback
fonts apply.
"""

import re
import zipfile

FACES_ENTRY = "font-roboto/roboto.html"
TO_ROOT = "../../../"  # from <root>/data/plugin/<name>/fonts.css
_STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_FONT_URL = re.compile(r"url\(\s*['\"]?/font-roboto/([A-Za-z0-9_.-]+\.woff2?)['\"]?\s*\)")
_FACE = re.compile(r"@font-face\s*\{[^{}]*\}")


def faces_css(html):
    """The @font-face rules of roboto.html with relative font URLs; rules with any other URL are dropped."""
    style = "\n".join(_STYLE.findall(html))
    faces = []
    for face in _FACE.findall(style):
        if "url(" not in face:
            continue
        rewritten = _FONT_URL.sub(lambda m: f"url({TO_ROOT}font-roboto/{m.group(1)})", face)
        urls = re.findall(r"url\(([^)]*)\)", rewritten)
        if not all(url.startswith(f"{TO_ROOT}font-roboto/") for url in urls):
            continue  # a URL we did not recognize: leave it out rather than point at an unknown place
        faces.append(rewritten)
    return "\n".join(faces)


def fonts_css(assets_zip_provider):
    """The stylesheet text (str): TensorBoard's Roboto faces, or a comment when the assets have none."""
    if assets_zip_provider is not None:
        try:
            with assets_zip_provider() as handle, zipfile.ZipFile(handle) as assets:
                css = faces_css(assets.read(FACES_ENTRY).decode("utf-8"))
            if css:
                return "/* Roboto as TensorBoard serves it (font-roboto/roboto.html) */\n" + css + "\n"
        except (KeyError, OSError, zipfile.BadZipFile, UnicodeDecodeError):
            pass
    return "/* TensorBoard serves no Roboto here: the fallback fonts apply */\n"
