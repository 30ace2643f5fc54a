"""The tab's static files: an allow-list of the package's static/ folder, matched exactly, never joined."""

import os

import tb_gpu_advisor

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(tb_gpu_advisor.__file__)), "static")
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def allowed_files(root=STATIC_DIR):
    """{relative posix name: absolute path} of every servable file under `root`, found once at start."""
    allowed = {}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "_")))
        for name in sorted(files):
            if os.path.splitext(name)[1] in CONTENT_TYPES and not name.startswith("."):
                path = os.path.join(directory, name)
                allowed[os.path.relpath(path, root).replace(os.sep, "/")] = path
    return allowed


def content_type(name):
    return CONTENT_TYPES[os.path.splitext(name)[1]]
