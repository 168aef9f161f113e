"""Text and TeX labels: their measurement before layout, and the fonts they are measured in.

    font_metrics  advances and ink extents read straight from TrueType tables
    tex_layout    TeX's math layout rules where ziamath's differ (importing it adjusts ziamath)
    labels        Text and Equation labels measured as Penrose measures them (`measure_label`)
    fonts/        the bundled DejaVu fonts and Latin Modern Math (with their LICENSE)

Rules: labels are measured once, before optimization, from the bundled fonts only (never a
system font), so a label's box is the same on every machine; the renderer draws with the same
files (`labels.FONT_DIR`). Nothing here knows of shapes, energies or the optimizer.
"""
