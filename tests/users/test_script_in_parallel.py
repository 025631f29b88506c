"""A user's script, run as ``__main__``: its own learners (a class decorated with
:func:`replify.wrap`, a contextual class the contextual conversion wraps, a function and a lambda that
refer to ``replify``) are pickled by value for
the workers, so they must evaluate with two processes and on Dask exactly as with one."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    import replify

    class MyHedge:
        def __init__(self, *, n, horizon, rng):
            self.n, self.rng = n, rng
            self.eta = np.sqrt(8 * np.log(n) / horizon)
            self.loss = np.zeros(n)

        def act(self):
            w = np.exp(-self.eta * (self.loss - self.loss.min()))
            return int(self.rng.choice(self.n, p=w / w.sum()))

        def update(self, cost):
            self.loss += cost

    T, n = 600, 4

    @replify.wrap(horizon=T, rho=0.1, norm="linf", block_size=100,
                  eps=replify.certified_eps(horizon=T, n=n, rho=0.1, block_size=100, norm="linf"))
    class MyReplicableHedge(MyHedge):
        pass

    def factory(*, n, horizon, rng):
        return replify.make("hedge", n=n, horizon=horizon, seed=int(rng.integers(2**31)))

    @replify.wrap(rho=0.1)
    class MyReplicableLinUCB:  # a contextual learner of the script's own: the contextual conversion
        problem, feedback = "contextual", "bandit"

        def __init__(self, *, n, horizon, rng):
            self.v = None

        def act(self, context):
            if self.v is None:
                self.v, self.b = np.eye(context.shape[1]), np.zeros(context.shape[1])
            self.x = np.array(context)
            return int(np.argmin(self.x @ np.linalg.solve(self.v, self.b)))

        def update(self, action, cost):
            self.v += np.outer(self.x[action], self.x[action])
            self.b += cost * self.x[action]

    learners = {"decorated": MyReplicableHedge, "function": factory,
                "lambda": lambda seed: replify.make("ftpl", n=n, horizon=T, seed=seed),
                "contextual": MyReplicableLinUCB}
    adversaries = {"contextual": ("linear-gaussian", {"d": 3, "contexts": "sphere"})}

    if __name__ == "__main__":
        out = {}
        for mode, kw in {"one": dict(n_jobs=1), "two": dict(n_jobs=2),
                         "dask": dict(n_jobs=2, backend="dask")}.items():
            for name, learner in learners.items():
                adversary, params = adversaries.get(name, ("iid-bernoulli", {}))
                report = replify.evaluate(learner, adversary, n=n, horizon=T, pairs=6, seed=3,
                                          progress=False, adversary_params=params, **kw)
                out[f"{mode} {name}"] = report.to_dict(per_pair=True)
        json.dump(out, sys.stdout, sort_keys=True, default=str)
''')


def test_replify_and_what_refers_to_it_pickle_by_value():
    """The default tier's part of the subprocess test below: a function of a user's ``__main__``
    that refers to ``replify`` is pickled by value (cloudpickle, as joblib and Dask send it), the
    ``replify`` module with it by name, and comes back working."""
    import pickle
    import types

    import cloudpickle

    import replify

    assert pickle.loads(pickle.dumps(replify)) is replify
    namespace = {"__name__": "__main__", "replify": replify}
    exec("def factory(*, n, horizon, rng):\n    return replify.make('hedge', n=n, horizon=horizon, "
         "seed=int(rng.integers(2**31)))\n", namespace)
    factory = types.FunctionType(namespace["factory"].__code__, namespace, "factory")
    again = pickle.loads(cloudpickle.dumps(factory))
    import numpy as np

    assert type(again(n=3, horizon=10, rng=np.random.default_rng(0))).__name__ == "Hedge"


@pytest.mark.slow  # three evaluations in a subprocess, Dask's cluster among them; the pickling above is the default tier's
def test_a_scripts_own_learners_run_alike_on_one_two_workers_and_dask(tmp_path):
    script = tmp_path / "my_experiment.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    for name in ("decorated", "function", "lambda", "contextual"):
        one = out[f"one {name}"]
        for key in ("pairs", "identical", "regret", "rho_hat"):
            assert key in one
        # the reports are the same, field by field, whatever runs the pairs (provenance aside: it
        # records n_jobs and the backend)
        strip = lambda d: {k: v for k, v in d.items() if k not in ("provenance", "n_jobs", "backend", "elapsed")}
        assert strip(out[f"two {name}"]) == strip(one), name
        assert strip(out[f"dask {name}"]) == strip(one), name


LEARNER = textwrap.dedent('''
    import replify

    STEP = {step}

    def helper(n):
        return {helper} % n

    class Learner:
        def __init__(self, *, n, horizon, rng):
            self.n = n

        def act(self):
            return (STEP + helper(self.n)) % self.n

        def update(self, cost):
            pass

    result = replify.sweep(learners=[Learner], adversaries=["iid-bernoulli"], ns=[3], horizons=[100], pairs=4, seed=0,
                           path="results.jsonl", progress=False)
    print("reused", result.reused)
''')

#: A runner that executes the script it is given in its own ``__main__`` (its classes' module file is the runner's)
RUNNER = "import sys\nexec(open(sys.argv[1]).read(), {'__name__': '__main__'})\n"


@pytest.mark.parametrize("how, differ", [("stdin", "step"), ("stdin", "helper"), ("runner", "step"), ("runner", "helper")])
def test_two_scripts_learners_of_one_name_never_share_a_results_row(tmp_path, how, differ):
    """Two scripts, given on standard input (no source file to read) or run by exec in a runner's
    ``__main__`` (the file inspect names is the runner's, the same for both), whose ``__main__.Learner``
    differ only in a module constant or a helper function's body: the second must not be answered
    with the first's row; the first's code, run again, reuses its own."""
    (tmp_path / "runner.py").write_text(RUNNER)

    def script(value):
        code = LEARNER.format(step=value if differ == "step" else 0, helper=value if differ == "helper" else 0)
        (tmp_path / f"script{value}.py").write_text(code)
        command = [sys.executable, "-"] if how == "stdin" else [sys.executable, "runner.py", f"script{value}.py"]
        return subprocess.run(command, input=code if how == "stdin" else None, capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONWARNINGS": "ignore"})

    first = script(0)
    assert first.returncode == 0 and "reused 0" in first.stdout, first.stderr[-2000:]
    other = script(1)
    assert other.returncode != 0 and "other code" in other.stderr and "__main__.Learner" in other.stderr, other.stdout
    again = script(0)
    assert again.returncode == 0 and "reused 1" in again.stdout, again.stderr[-2000:]


def test_a_scripts_code_is_the_same_code_in_every_process():
    """A script given on standard input is known by its compiled code: a set among its constants
    must not make it other code in the next process (string hashes, and so a set's order, change
    from process to process), or its own rows would be refused as another learner's."""
    code = textwrap.dedent('''
        from replify.experiments.learner_code import code_of

        def learner(*, n, horizon, rng):
            return "hedge" if "x" in {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"} else None

        print(code_of(learner))
    ''')
    codes = {subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(codes) == 1 and "sha256:" in codes.pop()
