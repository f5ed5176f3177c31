"""OCI client against the real distribution registry."""
