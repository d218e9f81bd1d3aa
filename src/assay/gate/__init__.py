"""assay.gate."""
