"""cert-manager (controller and cainjector) on the local control plane."""
