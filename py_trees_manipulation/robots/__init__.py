"""Robot descriptions: an arm with a parallel gripper, as a YAML file checked against its URDF.

Pure (no pybullet, no py_trees): the URDF is read with ``xml.etree``. Modules: :mod:`.description`
(the :class:`RobotDescription` dataclass and the key table), :mod:`.loader` (load and check a file;
stock models by name), :mod:`.urdf` (the URDF reader), :mod:`.cli` (``ptm robots``). The stock
description files are in ``robots/models/``.
"""

from .description import FingerPad, GripperDescription, PadGeometry, RobotDescription
from .loader import (RobotDescriptionError, UnknownModelError, load_description, resolve_model, stock_description,
                     stock_models)

__all__ = ["RobotDescription", "GripperDescription", "FingerPad", "PadGeometry", "RobotDescriptionError",
           "UnknownModelError", "load_description", "resolve_model", "stock_description", "stock_models"]
