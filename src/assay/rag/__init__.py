"""assay.rag."""
