"""Worker processes: where layouts and live sessions run, outside the server's event loop.

    pool            the bounded pool of layout workers with admission control (server side), and
                    what every worker process does at its start (memory cap, cache budgets, warm-up)
    layout_job      one layout (or conversion) as JSON data in, an outcome dict out (worker side)
    live_pool       the live workers and the sessions on them (server side)
    live_session    one live editing session (worker side): frames, pause/step, drags
    drag_constraint a shape's draggingConstraint, parsed and evaluated without running JavaScript
    warm_up         what a worker loads before its first timed layout
    compile_cache   the compiled-code cache on disk the workers share, bounded in bytes

Rules: jobs and outcomes cross the process boundary as JSON, never pickle; a worker's failure
fails only its own request; the worker side runs the pipeline (service.pipeline) and knows
nothing of HTTP.
"""
