"""File formats several layers read or write: KITTI, Omni3D, OOXML (read strictly, written deterministically), and
the camera-frame cuboid geometry of the 3D ones (``geometry``)."""
