"""static/index.js preloads every module and stylesheet of the tab: the list in it must name them all."""

import re

from tb_gpu_advisor.plugin.static_files import STATIC_DIR, allowed_files


def _listed(name):
    source = open(f"{STATIC_DIR}/index.js", encoding="utf-8").read()
    body = re.search(rf"export const {name} = \[(.*?)\];", source, re.S).group(1)
    return re.findall(r"'([^']+)'", body)


def test_every_module_is_preloaded():
    modules = sorted(name for name in allowed_files() if name.endswith(".js") and name != "index.js")
    assert sorted(_listed("MODULES")) == modules, "add the new module to MODULES in static/index.js"


def test_every_stylesheet_is_loaded_at_once():
    sheets = sorted(name for name in allowed_files() if name.endswith(".css"))
    assert sorted(s for s in _listed("STYLESHEETS") if not s.startswith("../")) == sheets
    assert "../fonts.css" in _listed("STYLESHEETS")  # TensorBoard's Roboto, served by the plugin's /fonts.css
