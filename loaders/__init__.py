"""Load, decode and export: HF load_dataset wrappers, format readers/writers (KITTI, Omni3D)."""
