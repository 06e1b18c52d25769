"""Pure geometry: poses (transforms3d), screw motions and door/drawer affordances.

Imports only numpy, scipy and transforms3d. Quaternions are ``(w, x, y, z)``.
"""
