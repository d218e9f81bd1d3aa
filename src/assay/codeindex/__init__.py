"""assay.codeindex."""
