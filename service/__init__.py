"""The product: the pipeline (trio -> layout -> SVG), the SVG renderer, the HTTP service and the CLI."""
