"""assay.memory."""
