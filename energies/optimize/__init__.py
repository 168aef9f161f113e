"""Layout optimization: a compiled diagram's energy in, the unknowns' values out.

    penrose_lbfgs    Penrose's own L-BFGS, the default inner solver of a round
    scipy_lbfgsb     the one adapter to scipy's private L-BFGS-B routine (version-checked)
    lbfgs            one exterior-point round: L-BFGS on the penalized energy until Penrose's test
    optimizer        Penrose's exterior-point penalty method, stage by stage (`optimize`)
    portfolio        multi-start layout: several initial states, the best layout kept
    parallel_starts  a portfolio's later starts computed ahead in forked processes, same result

Rules: a module here sees a problem only through `optimizer.PenaltyProblem` (energies, gradients,
stages), never a diagram's Style or shapes; each module imports only those listed above it (and
adcore), so the dependencies run one way; and whatever the processes or drivers, the same problem,
start and options give the same layout.
"""
