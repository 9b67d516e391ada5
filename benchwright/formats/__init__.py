"""File formats several layers read or write: KITTI, Omni3D, OOXML (read strictly, written deterministically)."""
