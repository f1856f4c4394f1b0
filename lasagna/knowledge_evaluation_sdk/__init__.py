"""The documented public import paths (thin re-exports of lasagna's own modules)."""
