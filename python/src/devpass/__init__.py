"""devpass for PyTorch and ExecuTorch users.

- ``devpass.executorch``: devpass as ExecuTorch's ``PropagateDevicePass`` (``install()``,
  ``installed()``, ``PropagateDevicePass(..., policy=...)``).
- ``devpass.export``: an ExecuTorch edge program as a devpass.graph/1 document; the command line
  ``devpass-export`` exports torchvision models under a named partitioning.
- ``devpass.propagate``: the C++ pass itself over arrays (include/devpass/interop/array_graph.hpp).

torch and executorch are imported when a module that needs them is.
"""

from ._devpass import ROLES, ConfigError, GraphError, propagate

__version__ = "0.1.0"
__all__ = ["ROLES", "ConfigError", "GraphError", "propagate", "__version__"]
