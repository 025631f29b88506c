"""replify's built-in plugins, installed under the import name ``replify_plugins``.

One module per learner or adversary, each registered through the ``"replify"`` entry-point
group exactly as a third-party plugin would be.
"""

from replify import _moved

# the modules that lived here before the folders by kind (replify_plugins.hedge), kept importable
_moved.install()
