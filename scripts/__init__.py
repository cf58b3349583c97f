"""Set-up, training and benchmark tools; run each as ``python -m scripts.NAME`` from the repository root."""
