"""What the paper's theorems guarantee, with its errata applied (docs/certificates.md).

``certificates`` is the mathematics alone — union bounds, concentration radii, ``certify`` — and
imports only the ground floor, so that learners can carry their proof's bound (layer 1).
``theory`` gives the general framework's parameters and bounds as functions of (T, n, ρ) and
:func:`replify.certified_eps`; it sits above the learners' building blocks and the plugin registry
(it reads a registered learner's union bound), below the wrapper.
"""
