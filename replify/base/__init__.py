"""The ground floor (layer 0): what every other layer of replify stands on, importing nothing of
replify's but :mod:`replify.errors`.

``checks`` (validation at the public boundary: every error names the argument, what was expected
and what came), ``protocol`` (the learner protocol checked: act, update, feedback, actions, the
horizon), ``paths`` (a path a user gave, and an output file checked before any work; ``checks``
still gives ``protocol``'s and ``paths``' names), ``randomness`` (the named random streams R, data
and adversary derived from one seed, paper §2), ``files`` (writing a user's files whole or not at
all), ``progress`` (bars and progress lines for long runs), ``references`` (a user's
``"module:Name"`` and ``"file.py:Name"``).

The public API is the top level of :mod:`replify` (and :mod:`replify.errors`); the layers under it
are ``base`` → ``guarantees.certificates`` → ``components`` → ``plugins`` → ``engine`` →
``evaluation`` → ``plots`` → ``experiments`` → ``cli``.
"""
