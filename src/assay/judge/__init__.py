"""assay.judge."""
