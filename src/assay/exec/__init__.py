"""assay.exec."""
