"""From a laid-out diagram to pictures: shape values, SVG, and SVG converted to PNG or PDF.

    concrete    every shape property evaluated at the optimum, as the renderer's values
    svg         the SVG of concrete shapes, element by element as Penrose draws it (`render_svg`)
    arrowheads  Penrose's arrowhead markers and the line shortening that makes room for them
    formats     an SVG as PNG (resvg) or vector PDF (svg2pdf), drawn with our bundled fonts

Rules: output is deterministic (same input, same bytes); safe mode keeps every document free of
script and external loads; nothing here lays out, runs a worker or serves HTTP.
"""
