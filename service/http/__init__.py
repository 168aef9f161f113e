"""The HTTP service: the FastAPI app (`app.create_app`), one router per concern, and what they share.

    app          create_app(settings): the routers, error handlers, middleware and shared state
    diagrams     POST /diagrams, GET /diagrams/{fmt}/{encoded}: pictures and reports
    live         POST /live, /live/{id}: live layouts as server-sent events
    operations   /healthz, /readyz, /metrics
    playground   the playground's page and our example trios
    errors       the JSON error answers and the app's exception handlers
    schemas      the API's JSON shapes (they make the OpenAPI document)
    middleware   request ids, access log, body size limits (plain ASGI)
    metrics      Prometheus metrics of one app instance
    result_cache finished renderings, keyed by everything that determines the picture
    diagram_url  a trio in a URL (Kroki's encoding)

Rules: the event loop never lays out, converts or renders: that is the workers' job
(service.workers); this package turns requests into jobs and outcomes into answers. Nothing
outside it imports it but the command line (`serve`, `url`, the request schema) and the tests.
"""
