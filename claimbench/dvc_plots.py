"""``dvc plots show`` and ``dvc plots diff`` without network.

dvc-render writes a page whose ``{scripts}`` are three ``<script src="https://cdn...">`` tags
(vega, vega-lite, vega-embed): offline the page renders nothing. This module builds
``claimbench/templates/dvc_plots.html``, an HTML template for DVC's ``--html-template`` that

- has no ``{scripts}`` placeholder, so dvc-render's CDN tags are left out, and
- inlines the three libraries, bundled by the PyPI package ``vl-convert-python`` (the Vega
  project's own converter, BSD-3; pinned in pyproject.toml): ``vl_convert.javascript_bundle()``
  returns vega, vega-lite and vega-embed with all their dependencies as one script that sets
  ``window.vegaEmbed``, which is what each plot's ``<div>`` calls.

``.dvc/config`` names the template (``plots.html_template``), so plain ``dvc plots show`` and
``dvc plots diff`` use it. The template is committed (a fresh clone needs no build step);
``claimbench plots`` rewrites it from the installed package and ``claimbench plots --check``
fails when the committed file differs (a test runs that check).
"""
from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass
from pathlib import Path

from stages.common.io import write_text

TEMPLATE = Path(__file__).resolve().parent / "templates" / "dvc_plots.html"
VEGA_LITE = "5.21"          # dvc-render's specs declare the Vega-Lite v5 schema: bundle a v5 release
PLACEHOLDERS = ("{plot_divs}", "{scripts}", "{refresh_tag}")   # what dvc-render substitutes

# dvc-render calls vegaEmbed(el, spec) without options. Ours: SVG (its text, legends included, is
# in the page: searchable, and what the browser tests read) and the action menu without "Open in
# Vega Editor" (a link off the machine).
EMBED_DEFAULTS = "{renderer: 'svg', actions: {export: true, source: true, compiled: true, editor: false}}"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{refresh_tag}
<title>claimbench: DVC plots</title>
<!-- vega {vega}, vega-lite {vega_lite}, vega-embed {vega_embed} (BSD-3-Clause, the Vega project)
     and their dependencies, bundled by vl-convert-python {vl_convert} (BSD-3-Clause).
     Written by `claimbench plots` (claimbench/dvc_plots.py): do not edit by hand. -->
<script>
(() => {{
{bundle}
}})();
(() => {{
  const embed = window.vegaEmbed;
  window.vegaEmbed = (el, spec, opts) => embed(el, spec, Object.assign({defaults}, opts || {{}}));
}})();
</script>
<style>
  body {{ font-family: system-ui, sans-serif; margin: 1rem; }}
  header p {{ color: #555; margin: .2rem 0 1rem; font-size: .9rem; }}
  main {{ display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }}
  main > div {{ border: 1px solid #ddd; border-radius: 6px; padding: .5rem; }}
  main img {{ max-width: 640px; }}
</style>
</head>
<body>
<header>
  <h1>claimbench: DVC plots</h1>
  <p>The plots the pipeline's dvc.yaml files declare, the studies' top-level <code>plots:</code>
  first. Rendered offline: vega {vega}, vega-lite {vega_lite} and vega-embed {vega_embed} are in
  this page.</p>
</header>
<main>
{plot_divs}
</main>
</body>
</html>
"""


class TemplateError(RuntimeError):
    """The bundle cannot go into the template as it is."""


def build_template() -> str:
    """The template's text, from the installed vl-convert-python (about 0.9 MB, ~2 s)."""
    from importlib.metadata import version

    import vl_convert as vlc

    bundle = vlc.javascript_bundle(vl_version=VEGA_LITE)
    # dvc-render fills the template with str.replace: a placeholder inside the library code
    # would be replaced too, and "</script" would end the inline script early.
    for marker in (*PLACEHOLDERS, "</script"):
        if marker in bundle:
            raise TemplateError(f"the vega bundle contains {marker!r}: it cannot be inlined as is")
    versions = {
        "vega": vlc.get_vega_version(),
        "vega_lite": _full_version(bundle, VEGA_LITE),
        "vega_embed": vlc.get_vega_embed_version(),
        "vl_convert": version("vl-convert-python"),
    }
    # In PAGE, {{ and }} are literal braces (CSS, JS) and {name} a field filled here; dvc-render's
    # own fields ({plot_divs}, {refresh_tag}) are left for it. The bundle goes in last, as it is.
    page = PAGE.replace("{{", "\0").replace("}}", "\1")
    for key, value in versions.items():
        page = page.replace("{" + key + "}", html.escape(value))
    page = page.replace("{defaults}", EMBED_DEFAULTS).replace("\0", "{").replace("\1", "}")
    return page.replace("{bundle}", bundle)


def _full_version(bundle: str, minor: str) -> str:
    """The full Vega-Lite version in the bundle (vl-convert names only the minor one)."""
    found = re.search(r'"(' + re.escape(minor) + r'\.\d+)"', bundle)
    return found.group(1) if found else minor


def external_urls(page: str) -> list[str]:
    """Every ``src``/``href`` in the page's tags that points off the machine (http, https, //)."""
    return re.findall(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?((?:https?:)?//[^"'\s>]+)""",
                      page, flags=re.IGNORECASE)


def write_template(path: Path = TEMPLATE) -> Path:
    write_text(path, build_template())
    return path


def check_template(path: Path = TEMPLATE) -> str | None:
    """None when ``path`` is what the installed package builds, else what is wrong."""
    if not path.exists():
        return f"{path} is missing: run `claimbench plots` to write it"
    if path.read_text(encoding="utf-8") != build_template():
        return (f"{path} differs from what the installed vl-convert-python builds: "
                "run `claimbench plots` and commit it")
    return None


# -- what the studies declare (top-level `plots:` of each stages/<study>/dvc.yaml) ----------------
@dataclass(frozen=True)
class Declared:
    """One entry of a dvc.yaml's top-level ``plots:``: a vega plot of a table, or an image."""
    dvcfile: str                 # relative to the root, e.g. stages/nac_b/dvc.yaml
    plot_id: str
    path: str                    # the data file (or image, or folder of images), relative to the root
    template: str | None = None  # None for an image
    x: str | None = None
    y: tuple[str, ...] = ()
    title: str | None = None

    @property
    def is_image(self) -> bool:
        return self.template is None


def declared_plots(root: Path) -> list[Declared]:
    """Every top-level plot of the studies' dvc.yaml files (and the corpora's), in file order."""
    import posixpath

    import yaml

    out: list[Declared] = []
    for dvcfile in sorted(root.glob("stages/*/dvc.yaml")):
        rel = dvcfile.relative_to(root).as_posix()
        here = posixpath.dirname(rel)
        for entry in (yaml.safe_load(dvcfile.read_text()) or {}).get("plots") or []:
            if isinstance(entry, str):
                path = posixpath.normpath(posixpath.join(here, entry))
                out.append(Declared(rel, entry, path))
                continue
            (plot_id, props), = entry.items()
            (source, columns), = (props.get("y") or {"": []}).items()
            out.append(Declared(rel, plot_id, posixpath.normpath(posixpath.join(here, source)),
                                props.get("template", "linear"), props.get("x"), tuple(columns),
                                props.get("title")))
    return out


def known_templates(root: Path) -> set[str]:
    """DVC's built-in plot templates and the project's own (``.dvc/plots/*.json``)."""
    from dvc_render.vega_templates import TEMPLATES

    return {t.DEFAULT_NAME for t in TEMPLATES} | {p.stem for p in (root / ".dvc" / "plots").glob("*.json")}


def plot_problems(root: Path, plots: list[Declared]) -> list[str]:
    """What would keep a declared plot from drawing in ``root``: a missing file, a column the table
    lacks, an unknown template, a vega plot without a title. Empty when all is well."""
    templates = known_templates(root)
    problems = []
    for p in plots:
        where = f"{p.dvcfile}: {p.plot_id!r}"
        target = root / p.path
        if not target.exists():
            problems.append(f"{where}: {p.path} does not exist")
            continue
        if p.is_image:
            continue
        if p.template not in templates:
            problems.append(f"{where}: unknown template {p.template!r}")
        if not p.title or not p.x or not p.y:
            problems.append(f"{where}: a vega plot needs a title, x and y")
        with target.open(newline="") as fh:
            header = next(csv.reader(fh), [])
        missing = [c for c in (p.x, *p.y) if c and c not in header]
        if missing:
            problems.append(f"{where}: {p.path} has no column {', '.join(missing)}")
    return problems
