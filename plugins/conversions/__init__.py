"""The built-in conversions, registered as a third party's would be (docs/plugins.md,
"Registering a conversion"): ``experts`` (the paper's §5 conversion in ℓ1 and ℓ∞), ``bandit``
(bandit feedback, ours) and ``contextual`` (ours). Their code is in :mod:`replify.conversions`."""

import replify
from replify.conversions import bandit, contextual, experts


@replify.hookimpl
def register_conversions(register):
    register(replify.ConversionSpec(
        "experts", experts.build, experts.ExpertsOptions, ("experts", "olo"), ("full",), default=True,
        summary="the paper's general conversion (Alg. general-framework, l1; general-framework-ell-infty, linf): "
                "adversarially rho-replicable, full information",
        docs="docs/wrapper.md"))
    register(replify.ConversionSpec(
        "bandit", bandit.build, bandit.BanditOptions, ("experts",), ("bandit",), default=True,
        summary="the general conversion under bandit feedback (ours): explores on steps drawn from R, feeds "
                "rounded block-mean estimates",
        docs="docs/certificates.md#the-general-conversion-under-bandit-feedback"))
    register(replify.ConversionSpec(
        "contextual", contextual.build, contextual.ContextualOptions, ("contextual",), ("full", "bandit"),
        default=True,
        summary="the general contextual conversion (ours): a rounded ridge estimate fed to the learner, which "
                "decides every committed step; iid rho-replicable",
        docs="docs/contextual.md"))
