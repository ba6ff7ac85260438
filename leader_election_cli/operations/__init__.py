"""Operations: each command's work over the cluster, from settings to a finished report."""
