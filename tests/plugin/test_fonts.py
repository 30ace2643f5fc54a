"""fonts: TensorBoard's own Roboto faces, with URLs relative to the plugin's fonts.css."""

import io
import zipfile

from tensorboard import assets

from tb_gpu_advisor.plugin.fonts import faces_css, fonts_css


def test_the_real_assets_give_relative_roboto_faces():
    css = fonts_css(assets.get_default_assets_zip_provider())
    assert css.count("@font-face") >= 4 and "font-family: 'Roboto'" in css
    assert "url(../../../font-roboto/" in css and "url(/" not in css


def test_no_assets_or_no_faces_give_a_comment_only():
    assert "@font-face" not in fonts_css(None)

    def empty_zip():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("index.html", "<html></html>")
        buffer.seek(0)
        return buffer

    assert "@font-face" not in fonts_css(empty_zip)


def test_faces_with_other_urls_are_left_out():
    html = (
        "<style>@font-face { font-family: 'Roboto'; src: url(/font-roboto/a.woff2) format('woff2'); }\n"
        "@font-face { font-family: 'Roboto'; src: url(https://example.com/x.woff2); }\n"
        "@font-face { font-family: 'Roboto'; src: url(/elsewhere/b.woff2); }</style>"
    )
    css = faces_css(html)
    assert css.count("@font-face") == 1 and "url(../../../font-roboto/a.woff2)" in css
