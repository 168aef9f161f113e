"""The notebook widget: a builder diagram the reader can drag in Jupyter (docs/builder.md).

    from service import DiagramWidget        # needs the `notebook` extra: pip install 'penrose-py[notebook]'
    w = DiagramWidget(db)                    # or db.widget()

Modules: `drag` (pinning a dragged shape and re-optimizing the rest, no Jupyter needed), `widget`
(the anywidget class), `static/widget.js` and `static/widget.css` (its frontend).
"""

from __future__ import annotations

try:
    from .widget import DiagramWidget
except ImportError as e:  # anywidget is in the optional `notebook` extra
    raise ImportError(f"the diagram widget needs anywidget: pip install 'penrose-py[notebook]' ({e})") from e

__all__ = ["DiagramWidget"]
