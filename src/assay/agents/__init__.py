"""assay.agents."""
