"""Write measurements.csv: synthetic "measurements" of every mapping of camera.sdf on
board.moa, for the tutorial. They are not real: the time of one frame is the model's
own `max` (the busiest element of a pipelined execution) under a stated ground truth
that the .moa does not know (a_cpu = 5e-9, a_dsp = 0.8e-9, a_bus = 3e-9), times 3%
log-normal noise (seed 1)."""
import csv
import itertools
from pathlib import Path

import numpy as np

import dsl
from mapping import Problem, evaluate

HERE = Path(__file__).parent
TRUTH = {"a_cpu": 5e-9, "a_dsp": 0.8e-9, "a_bus": 3e-9}

(app,) = dsl.load_sdf(HERE / "camera.sdf")
(arch,) = dsl.load_moa(HERE / "board.moa")
problem = Problem(app, arch, params=TRUTH)
rng = np.random.default_rng(1)
actors = list(app.actors)
with open(HERE / "measurements.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow([f"pe_{a}" for a in actors] + ["time_s"])
    for pes in itertools.product(arch.pes, repeat=len(actors)):
        true = evaluate(problem, dict(zip(actors, pes)), "time", "max").value
        writer.writerow([*pes, f"{true * rng.lognormal(0, 0.03):.6g}"])
