"""``assay view``: a read-only web viewer of run directories (runs, a run, cases, compare, trends).

* :class:`Site` renders every page from the run directories under one folder (plain HTML, inline SVG plots).
* :func:`make_app` serves it (Starlette, GET only, loopback by default); :func:`serve` runs it under uvicorn.
* :func:`write_bundle` writes the same pages as a static site that works from ``file://``.
"""

from __future__ import annotations

from assay.view._bundle import write_bundle
from assay.view._case import case_view
from assay.view._site import NotFound, Site
from assay.view.app import make_app, serve

__all__ = ["NotFound", "Site", "case_view", "make_app", "serve", "write_bundle"]
