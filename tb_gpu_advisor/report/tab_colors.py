"""The tab's light-theme colour of each breakdown category, read from its stylesheet, so that the HTML report
paints every category as the tab does."""

import os
import re

STYLESHEET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static", "style.css")
_ROOT = re.compile(r":root\s*\{([^}]*)\}")
_VARIABLE = re.compile(r"(--[\w-]+)\s*:\s*([^;]+);")
_RULE = re.compile(r"([^{}]+)\{([^}]*)\}")
_FILL = re.compile(r"fill\s*:\s*var\((--[\w-]+)\)")
_CATEGORY = re.compile(r"^\.cat-([\w-]+)$")


def tab_colors(css):
    """{category: colour} of the `.cat-<category>` rules of the stylesheet text `css`, in its light theme (the
    first `:root` block)."""
    root = _ROOT.search(css)
    variables = dict(_VARIABLE.findall(root.group(1))) if root else {}
    colors = {}
    for selectors, body in _RULE.findall(css):
        fill = _FILL.search(body)
        if not fill or fill.group(1) not in variables:
            continue
        for selector in selectors.split(","):
            match = _CATEGORY.match(selector.strip())
            if match:
                colors.setdefault(match.group(1), variables[fill.group(1)].strip())
    return colors


def _load():
    with open(STYLESHEET, encoding="utf-8") as handle:
        return tab_colors(handle.read())


COLORS = _load()
