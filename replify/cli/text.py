"""What the command line prints: a report as a table of figures, each saying whether it is
certified or measured (docs/claims.md), and errors folded onto one line."""

from __future__ import annotations

import re
from typing import Any

from replify.plots import rho_interval_label

#: typeguard's report of a value that matches no member of a union, as the public boundary
#: words it (replify.base.checks.public): one line per member, which the command line folds into one.
_UNION = re.compile(r'argument "(?P<name>[^"]+)" \((?P<got>\S+) did not match any element in the union:\n'
                    r'(?P<members>(?:  .*\n?)+)\) in (?P<func>\S+)', re.DOTALL)


def one_line(message: str) -> str:
    """An error message on one line: a union mismatch becomes ``argument "x" of f(): expected A or
    B, got C``; any other line break becomes "; "."""
    match = _UNION.fullmatch(message)
    if match is not None:
        expected = []
        for member in match["members"].strip("\n").split("\n"):
            name, _, why = member.strip().partition(": ")
            name = "None" if name == "NoneType" else name
            expected.append(name if why.startswith("is not an instance of") else f"{name} ({why})")
        return f'argument "{match["name"]}" of {match["func"]}: expected {" or ".join(expected)}, got {match["got"]}'
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def report_table(report: Any) -> str:
    lo, hi = report.rho_ci
    rlo, rhi = report.regret_ci
    lines = [
        f"{report.learner} on {report.adversary}: n={report.n}, T={report.horizon}, {report.pairs} pairs, seed={report.seed}"
        + (" (block-sum fast path)" if report.fast_path else ""),
        f"  rho_hat          {report.rho_hat:.4f}   {rho_interval_label([report.rho_ci_kind])} CI [{lo:.4f}, {hi:.4f}]   "
        f"({report.failures} of {report.pairs} pairs differ; measured)",
    ]
    params = report.params or {}
    bound = params.get("replicability_bound", params.get("rho_bound"))  # block learners; the bandit ones
    if (report.params or {}).get("calibration"):
        lines.append(f"  claim            {report.params['calibration']}")
    if params.get("certificate_note"):
        lines.append(f"  rho bound        {bound:.4g}   NOT certified: {params['certificate_note']}")
    elif bound is not None and report.certified is False and bound >= 1:
        lines.append(f"  rho bound        none   NOT certified: the proof's union bound for the parameters in force is "
                     f"{bound:.4g} >= 1, which bounds nothing")
    elif bound is not None and report.certified is False:
        lines.append(f"  rho bound        {bound:.4g}   NOT certified: the proof's bound for the parameters in force "
                     f"exceeds rho={report.params.get('rho')}")
    elif bound is not None:
        lines.append(f"  rho bound        {bound:.4g}   (certified: the proof's union bound for the parameters in force)")
    elif report.certified is False:
        lines.append("  rho bound        none: the proof does not apply to the parameters in force (not certified)")
    lines += [
        f"  regret           {report.regret_mean:.2f}   95% CI [{rlo:.2f}, {rhi:.2f}]   (measured)"
        + (f"   bound {report.regret_bound:.4g} (certified)" if report.regret_bound is not None else "")
        + (f"; vacuous: at least T x (cost range) = {report.trivial_regret:.4g}, which any learner's regret is within"
           if report.regret_bound_vacuous else ""),
        f"  agreement        {report.agreement_mean:.4f} of steps (measured)",
    ]
    if report.pseudo_regret is not None:
        plo, phi = report.pseudo_regret_ci
        lines.insert(-1, f"  pseudo-regret    {report.pseudo_regret_mean:.2f}   95% CI [{plo:.2f}, {phi:.2f}]   (measured: "
                         "the expected costs of the arms played, against the best mean, or where contexts change the "
                         "best policy's)")
    if report.regret_bound is None and report.regret_bound_note:
        lines.append(f"  regret bound     {report.regret_bound_note}")
    if report.decision is not None:
        lines.append(f"  decision         rho {report.decision} {report.target} after {report.pairs} pairs   (measured, "
                     f"sequential at alpha={report.alpha:g}; the rho_hat interval above is its anytime-valid sequence)")
    if report.learning_gain is not None:
        glo, ghi = report.learning_gain_ci
        lines.append(f"  gain over constant {report.learning_gain:.2f}   95% CI [{glo:.2f}, {ghi:.2f}]   (measured on the same "
                     "draws and R, against the regret of the expert constant draws from R; <= 0: it has not learned)")
    if report.max_step_disagreement is not None:
        mlo, mhi = report.max_step_disagreement_ci
        lines.append(f"  max step disagreement {report.max_step_disagreement:.4f}   95% CI [{mlo:.4f}, {mhi:.4f}]   "
                     "(measured, simultaneous)")
    if report.first_divergence_median is not None:
        lines.append(f"  first divergence median step {report.first_divergence_median:.0f} (measured, over the pairs that part)")
    if report.params and "block_size" not in report.params:  # a learner of phases (the bandit eliminations)
        p = report.params
        shown = {k: p[k] for k in ("pulls", "width_scale", "pull_scale", "confidence_scale", "decisions", "block_ends",
                                   "sigma", "starts", "samples", "grid_scale") if p.get(k) is not None}
        if "decisions" in shown:  # perturbed-commit: its decision steps say where its blocks end
            shown.pop("block_ends", None)
        noise = [_noise(p)] if p.get("eps_schedule") else []
        lines.append("  parameters       " + ", ".join([f"{k}={_figures(v)}" for k, v in shown.items()] + noise))
    elif report.params:
        p = report.params
        name = p.get("algorithm") or report.learner
        if report.certified is False:  # the theorem does not apply to these parameters: do not cite it as if it did
            outside = f"outside {p['theorem']}: not certified" if p.get("theorem") else "no theorem: measured"
            lines.append(f"  parameters       {name}: B={p.get('block_size')}, {_noise(p)} ({outside})")
        else:
            theorem = f" ({p['theorem']})" if p.get("theorem") else ""
            lines.append(f"  parameters       {name}{theorem}: B={p.get('block_size')}, {_noise(p)}")
    return "\n".join(lines)


def _noise(p: dict) -> str:
    """A learner's noise in a line: its ε, or — for learners with one per decision (perturbed-commit,
    perturbed-bandit) — their first and last, with the explorations per arm and block where there are."""
    schedule = p.get("eps_schedule")
    if p.get("eps") is None and schedule:
        text = (f"eps={schedule[0]:.4g}" if len(schedule) == 1 else
                f"eps={schedule[0]:.4g}..{schedule[-1]:.4g} over {len(schedule)} decisions")
        return text + (f", explore={p['explore']}" if p.get("explore") is not None else "")
    return f"eps={_figures(p.get('eps'))}"


def _figures(value: Any) -> Any:
    """A parameter as printed: floats to 4 significant figures (0.1, not 0.09999999999999992; the
    exact value is in --json and to_dict()), inside tuples and lists too; anything else as it is."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)) and any(isinstance(v, float) for v in value):
        inner = ", ".join(str(_figures(v)) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return value


__all__ = ["one_line", "report_table"]
